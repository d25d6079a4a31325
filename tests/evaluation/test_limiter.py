"""The shared limiter: smooth spacing at a known rpm, a common pause on 429, adaptive slow-down and recovery."""

from __future__ import annotations

import threading
import time
from itertools import pairwise

import pytest

from config import load_settings
from evaluation.limiter import RateLimiter, RunStopped
from evaluation.start_spacer import StartSpacer
from tests.support.fake_clock import FakeClock


def starts(limiter: RateLimiter, clock: FakeClock, n: int) -> list[float]:
    out = []
    for _ in range(n):
        limiter.acquire()
        out.append(clock.now)
        limiter.on_success()
    return out


def test_known_rpm_spaces_requests_evenly_not_in_bursts():
    clock = FakeClock()
    lim = RateLimiter(60, safety=0.0, clock=clock, sleep=clock.sleep)
    times = starts(lim, clock, 5)
    assert [round(b - a, 6) for a, b in pairwise(times)] == [1.0] * 4
    assert times[0] == 100.0  # the first request is not delayed


def test_safety_margin_widens_the_interval_slightly():
    lim = RateLimiter(120, safety=0.02)
    assert lim.interval_s == pytest.approx(0.51)


def test_unknown_rpm_does_not_wait_until_a_429():
    clock = FakeClock()
    lim = RateLimiter(0, clock=clock, sleep=clock.sleep)
    assert starts(lim, clock, 10) == [100.0] * 10
    assert lim.stats().waited_s == 0


def test_429_pauses_everyone_for_retry_after_then_spaces_the_restart():
    clock = FakeClock()
    lim = RateLimiter(0, clock=clock, sleep=clock.sleep)
    starts(lim, clock, 6)  # 6 successes at t=100
    clock.now = 103.0
    lim.on_rate_limited(2.0)
    assert lim.interval_s > 0  # slowed down from "no spacing"
    lim.acquire()
    assert clock.now == pytest.approx(105.0)  # nobody goes before Retry-After
    first = clock.now
    lim.acquire()
    assert clock.now - first == pytest.approx(lim.interval_s)  # restart is spaced, not a burst


def test_adaptive_interval_comes_from_the_rate_that_got_through():
    clock = FakeClock()
    lim = RateLimiter(0, clock=clock, sleep=clock.sleep)
    for _ in range(10):  # 10 successes over 5 s = one per 0.5 s
        lim.acquire()
        lim.on_success()
        clock.now += 0.5
    lim.on_rate_limited(0.1)
    assert lim.interval_s == pytest.approx(5.0 / 10 * 1.05, rel=0.01)


def test_the_pace_is_measured_on_the_latest_requests_not_the_whole_history():
    clock = FakeClock()
    lim = RateLimiter(0, clock=clock, sleep=clock.sleep)
    for gap in [1.0] * 20 + [0.1] * 20:  # slow at first, then the provider let 10 per second through
        clock.now += gap
        lim.acquire()
        lim.on_success()
    clock.now += 0.1
    lim.on_rate_limited(0.1)
    assert lim.interval_s == pytest.approx(0.105, rel=0.01)


def test_429s_of_one_episode_slow_down_once():
    clock = FakeClock()
    lim = RateLimiter(60, safety=0.0, clock=clock, sleep=clock.sleep)
    lim.on_rate_limited(30.0)  # a quota reset, nothing measured yet: half speed
    widened = lim.interval_s
    assert widened == pytest.approx(1.5)
    lim.on_rate_limited(30.0)  # other in-flight requests of the same burst
    lim.on_rate_limited(29.0)
    assert lim.interval_s == widened
    clock.now += 40  # a later, separate episode slows down again
    lim.on_rate_limited(30.0)
    assert lim.interval_s > widened


def test_a_short_retry_after_is_taken_as_the_pace_when_nothing_is_known():
    clock = FakeClock()
    lim = RateLimiter(0, clock=clock, sleep=clock.sleep)
    lim.on_rate_limited(0.4)  # a steady-rate limit says when its next slot frees
    assert lim.interval_s == pytest.approx(0.4)


def test_waiting_for_a_quota_reset_does_not_count_as_the_pace():
    clock = FakeClock()
    lim = RateLimiter(0, clock=clock, sleep=clock.sleep)
    for _ in range(20):  # a per-minute window let 20 through in 2 s...
        clock.now += 0.1
        lim.acquire()
        lim.on_success()
    lim.on_rate_limited(58.0)  # ...then closed until its oldest request ages out
    assert lim.interval_s == pytest.approx(0.1, rel=0.05)
    for _ in range(3):
        lim.acquire()  # after the reset, at that pace
        lim.on_success()
    clock.now += 0.05
    lim.on_rate_limited(0.05)
    # the 58 s wait is left out of the measured pace: still about 0.1 s, not 60 s / 20
    assert lim.interval_s < 0.2


def test_rate_recovers_gradually_but_never_below_the_known_limit():
    clock = FakeClock()
    lim = RateLimiter(60, safety=0.0, recovery=0.05, calm_s=2.0, clock=clock, sleep=clock.sleep)
    lim.on_rate_limited(30.0)
    slow = lim.interval_s
    clock.now += 0.5
    lim.on_success()  # too soon after the 429: no recovery yet
    assert lim.interval_s == slow
    clock.now += 3
    lim.on_success()
    assert 1.0 < lim.interval_s < slow  # a little faster
    for _ in range(200):
        lim.on_success()
    assert lim.interval_s == pytest.approx(1.0)  # back to the known limit, not beyond


def test_missing_retry_after_uses_the_configured_backoff():
    clock = FakeClock()
    lim = RateLimiter(0, no_hint_pause=7.0, clock=clock, sleep=clock.sleep)
    lim.on_rate_limited(None)
    lim.acquire()
    assert clock.now == pytest.approx(107.0)


def test_from_settings_reads_rpm_and_backoff(monkeypatch):
    lim = RateLimiter.from_settings(load_settings(LLM_REQUESTS_PER_MINUTE=30, RATE_LIMIT_RETRY_BASE_DELAY=3))
    assert lim.known_rpm == 30 and lim.interval_s == pytest.approx(2.04)


def test_negative_rpm_is_rejected():
    with pytest.raises(ValueError):
        RateLimiter(-1)


def test_threads_share_one_pace():
    lim = RateLimiter(1200, safety=0.0)  # one request per 50 ms across all threads
    stamps: list[float] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(5):
            lim.acquire()
            with lock:
                stamps.append(time.monotonic())
            lim.on_success()

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stamps.sort()
    gaps = [b - a for a, b in pairwise(stamps)]
    assert len(stamps) == 20
    assert stamps[-1] - stamps[0] >= 19 * 0.05 - 0.02  # one pace for all four threads
    assert stamps[-1] - stamps[0] <= 19 * 0.05 + 0.3
    assert sorted(gaps)[len(gaps) // 2] >= 0.045  # evenly spaced (a late thread wake-up may shorten one gap)


def test_a_429_during_a_wait_sends_the_waiter_behind_the_pause():
    lim = RateLimiter(120, safety=0.0)  # 0.5 s spacing
    lim.acquire()
    got: list[float] = []
    waiter = threading.Thread(target=lambda: (lim.acquire(), got.append(time.monotonic())))
    t0 = time.monotonic()
    waiter.start()
    time.sleep(0.1)
    lim.on_rate_limited(1.0)  # the waiter's slot (t0+0.4) now lies inside the pause
    waiter.join()
    assert got[0] - t0 >= 1.0


def test_stop_refuses_requests_and_wakes_waiters():
    stop = threading.Event()
    lim = RateLimiter(6, stop=stop)  # 10 s spacing
    lim.acquire()
    errors: list[BaseException] = []

    def blocked() -> None:
        try:
            lim.acquire()
        except RunStopped as exc:
            errors.append(exc)

    t = threading.Thread(target=blocked)
    t.start()
    time.sleep(0.1)
    stop.set()
    t.join(timeout=5)  # the waiter's slot is 10 s away: an error now means the stop woke it
    assert errors and not t.is_alive()
    with pytest.raises(RunStopped):
        lim.acquire()


class _RecordedWaits(threading.Event):
    """A stop event that is never set and records the waits asked of it instead of sleeping."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[float | None] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(timeout)
        return False


def test_start_spacer_enforces_the_gap_and_zero_means_none():
    stop = _RecordedWaits()
    spacer = StartSpacer(0.2, stop=stop, clock=lambda: 100.0)  # three starts at one instant
    for _ in range(3):
        assert spacer.wait_turn()
    assert stop.waits == [pytest.approx(0.2), pytest.approx(0.4)]  # the first at once, then one gap apart
    fast_stop = _RecordedWaits()
    fast = StartSpacer(0.0, stop=fast_stop, clock=lambda: 100.0)
    for _ in range(50):
        assert fast.wait_turn()
    assert fast_stop.waits == []  # zero means no waiting at all


def test_start_spacer_returns_false_once_stopped():
    stop = threading.Event()
    spacer = StartSpacer(5.0, stop=stop)
    assert spacer.wait_turn()
    threading.Timer(0.1, stop.set).start()
    t0 = time.monotonic()
    assert spacer.wait_turn() is False
    assert time.monotonic() - t0 < 4  # woken by the stop, not at the end of the 5 s gap
