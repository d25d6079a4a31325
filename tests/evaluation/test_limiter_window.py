"""A provider that only says 429: the limiter learns its request window from the first refusal (fake clock)."""

from __future__ import annotations

from collections import deque

import pytest

from evaluation.limiter import RateLimiter
from evaluation.request_window import LearntWindow, RequestLog, learn_window
from tests.support.fake_clock import FakeClock


class SlidingWindowProvider:
    """At most `n` requests in any `window_s` seconds; a refusal's Retry-After is when the oldest leaves."""

    def __init__(self, n: int = 10, window_s: float = 5.0) -> None:
        self.n, self.window_s = n, window_s
        self.admitted: deque[float] = deque()
        self.refusals = 0

    def answer(self, now: float) -> float | None:
        """None when admitted, else the Retry-After."""
        while self.admitted and now - self.admitted[0] >= self.window_s:
            self.admitted.popleft()
        if len(self.admitted) >= self.n:
            self.refusals += 1
            return self.admitted[0] + self.window_s - now
        self.admitted.append(now)
        return None


def run(requests: int, latency: float = 0.3) -> tuple[list[float], SlidingWindowProvider, RateLimiter]:
    clock, provider = FakeClock(), SlidingWindowProvider()
    limiter = RateLimiter(0, clock=clock, sleep=clock.sleep)
    done: list[float] = []
    while len(done) < requests:
        limiter.acquire()
        started = clock.now
        if (retry := provider.answer(started)) is not None:
            limiter.on_rate_limited(retry)
            clock.sleep(retry)  # the model client waits the Retry-After before sending again
            continue
        clock.sleep(latency)
        limiter.on_success()
        done.append(started)
    return done, provider, limiter


def test_the_first_429_tells_the_window_and_the_batch_then_runs_at_its_ceiling():
    starts, provider, limiter = run(60)
    assert provider.refusals == 1  # the one that told the ceiling
    stats = limiter.stats()
    assert stats.pacing == "learnt" and stats.requests_per_minute == 120.0
    assert stats.rate_limited == 1 and stats.rejected_wait_s == 2.0  # the refusal's wait is counted
    # 10 per 5 s: the 60th request can start no earlier than 25 s after the 10th (one request a call's latency
    # after the other, each batch of ten spans the same 2.7 s, so last-of-batch to last-of-batch is fair)
    assert 25.0 / (starts[59] - starts[9]) >= 0.95


def test_no_window_of_the_providers_length_holds_more_than_its_ceiling():
    starts, _, _ = run(45)
    assert all(sum(1 for t in starts if s <= t < s + 5.0) <= 10 for s in starts)


def test_a_first_429_without_retry_after_teaches_nothing():
    assert learn_window([1.0, 2.0, 3.0], 4.0, None) is None
    assert learn_window([1.0], 2.0, 3.0) is None
    assert learn_window([1.0, 1.5, 2.0], 2.5, 3.5) == LearntWindow(3, 5.0)


def test_a_late_first_429_is_not_taken_for_one_long_window():
    quiet = [float(t) for t in range(0, 30, 3)]  # ten requests over 30 s, well under the ceiling
    burst = [30.0 + 0.25 * i for i in range(10)]  # then ten in 2.5 s: the 5-s window is full
    learnt = learn_window(quiet + burst, 32.5, 2.5)
    assert learnt is not None and learnt.window_s <= 5.0 + 1e-9 and learnt.per_minute <= 120.0


def test_a_refusal_with_a_full_window_widens_the_margin_and_one_with_fewer_lowers_the_count():
    log = RequestLog(LearntWindow(10, 5.0), margin=0.0)
    log.seed([5.5 + 0.5 * i for i in range(9)])  # nine in the window: the tenth was a moment early
    log.tighten(10.0, 0.12)
    assert log.limit == LearntWindow(10, 5.0) and log.slack_s == pytest.approx(0.17)
    log.seed([8.0, 9.0, 9.5])  # only three in the window and still refused: the count was wrong
    log.tighten(10.0, 3.0)
    assert log.limit == LearntWindow(3, 5.0)
