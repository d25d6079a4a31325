"""A provider that only says 429: the limiter learns its request window from the first refusal (fake clock)."""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Callable

import pytest

from evaluation.limiter import RateLimiter
from evaluation.request_window import SLACK_S, LearntWindow, RequestLog, learn_window
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
    assert log.limit == LearntWindow(10, 5.0) and log.slack_s == pytest.approx(SLACK_S + 0.12)
    log.seed([8.0, 9.0, 9.5])  # only three in the window and still refused: the count was wrong
    log.tighten(10.0, 3.0)
    assert log.limit == LearntWindow(3, 5.0)


def test_a_refusal_explained_by_starts_the_log_let_go_of_is_timing_not_a_lower_count():
    # Learnt a little short (4.95 s for the provider's 5): the log lets the first two starts go at 5.0 and 5.01, but
    # they reached the provider 0.09 s after their stamps, so it still holds ten and its oldest leaves at 5.09.
    log = RequestLog(LearntWindow(10, 4.95), margin=0.0)
    log.seed([0.0, 0.01] + [0.5 + 0.05 * i for i in range(8)])
    assert log.free(5.02) == 2  # the log thinks two may go
    log.tighten(5.02, 0.07)
    assert log.limit == LearntWindow(10, 4.95) and log.slack_s == pytest.approx(SLACK_S + 0.07)


class InFlight:
    """One request in a thread of its own (the limiter keeps a request's ticket per thread): start it, answer it."""

    def __init__(self) -> None:
        self._jobs: queue.Queue[Callable[[], object] | None] = queue.Queue()
        self._done: queue.Queue[bool] = queue.Queue()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            job()
            self._done.put(True)

    def do(self, job: Callable[[], object]) -> None:
        self._jobs.put(job)
        assert self._done.get(timeout=10)

    def close(self) -> None:
        self._jobs.put(None)
        self._thread.join(10)


def learnt_after(order: list[str], taken_before: int) -> str | None:
    """Nine requests taken at full speed, then A and B start in that order and reach the provider in `order`.

    `order` holds "A+"/"B+" (taken) and "A-"/"B-" (refused, Retry-After 4 s), in the order the answers come back.
    """
    clock = FakeClock()
    limiter = RateLimiter(0, clock=clock, sleep=clock.sleep)
    for _ in range(taken_before):
        limiter.acquire()
        clock.sleep(0.1)
        limiter.on_success()
    requests = {"A": InFlight(), "B": InFlight()}
    for name in "AB":
        requests[name].do(limiter.acquire)
        clock.sleep(0.01)
    for answer in order:
        clock.sleep(0.05)
        requests[answer[0]].do(limiter.on_success if answer[1] == "+" else lambda: limiter.on_rate_limited(4.0))
    for request in requests.values():
        request.close()
    return limiter.stats().learnt_window


@pytest.mark.parametrize("order", [["A-", "B+"], ["B+", "A-"]])
def test_a_later_request_the_provider_took_first_counts_in_the_learnt_window(order):
    # A window of 10: nine taken, then B reached the provider before A (started a moment earlier) and filled it
    assert (learnt_after(order, taken_before=9) or "").startswith("10 per ")


def test_an_earlier_request_refused_after_the_first_refusal_does_not_count():
    # A window of 9, full: B's refusal came first (A looked admitted then), A's after it: the window holds 9, not 10
    assert (learnt_after(["B-", "A-"], taken_before=9) or "").startswith("9 per ")


def test_requests_in_the_order_they_started_keep_the_learnt_count():
    assert (learnt_after(["A+", "B-"], taken_before=9) or "").startswith("10 per ")
