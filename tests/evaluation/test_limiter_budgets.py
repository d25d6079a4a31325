"""The limiter's budgets: paced by the provider's headers, admitted against a token budget, taught by 429s."""

from __future__ import annotations

import threading
import time

import pytest

from evaluation.limiter import RateLimiter
from models.client import ResponseInfo
from tests.support.fake_clock import FakeClock


def headers(limit: int, remaining: int, reset: str, kind: str = "requests") -> dict[str, str]:
    return {f"x-ratelimit-limit-{kind}": str(limit), f"x-ratelimit-remaining-{kind}": str(remaining),
            f"x-ratelimit-reset-{kind}": reset}


def test_headers_set_the_pace_and_the_burst():
    clock = FakeClock()
    lim = RateLimiter(0, clock=clock, sleep=clock.sleep)
    lim.acquire()
    lim.on_success(ResponseInfo(headers(120, 1, "500ms")))  # 2 per second, a burst of two, one left
    starts = []
    for _ in range(5):
        lim.acquire()
        starts.append(clock.now)
    assert starts[0] == 100.0  # the announced one left goes at once
    gaps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    assert all(g == pytest.approx(0.5, rel=0.02) for g in gaps)  # then at the announced rate
    stats = lim.stats()
    assert stats.pacing == "headers" and stats.requests_per_minute == pytest.approx(120)


def test_a_known_token_budget_admits_by_the_estimate_and_corrects_by_the_usage():
    clock = FakeClock()
    lim = RateLimiter(0, tokens_per_minute=6000, clock=clock, sleep=clock.sleep)  # 100 tokens/s, 100 at once
    lim.acquire(100)
    assert clock.now == 100.0
    lim.on_success(ResponseInfo(prompt_tokens=50, completion_tokens=0, estimated_prompt_tokens=100))  # overestimated
    lim.acquire(50)  # the 50 given back cover it
    assert clock.now == pytest.approx(100.0, abs=0.02)
    lim.on_success(ResponseInfo(prompt_tokens=50, estimated_prompt_tokens=50))
    lim.acquire(100)  # the budget is spent: wait for it to refill
    assert clock.now == pytest.approx(101.0, rel=0.001)
    assert lim.stats().tokens_per_minute == pytest.approx(6000)


def test_a_429_message_teaches_the_token_limit_without_widening_the_request_pace():
    clock = FakeClock()
    lim = RateLimiter(0, clock=clock, sleep=clock.sleep)
    lim.acquire(1000)
    lim.on_rate_limited(0.5, ResponseInfo(estimated_prompt_tokens=1000, message=(
        "Rate limit reached on tokens per min (TPM): Limit 60000, Used 60000, Requested 1000.")))
    assert lim.interval_s == 0.0  # the provider said what the limit is: no guessing
    assert lim.stats().tokens_per_minute == pytest.approx(60000)
    lim.acquire(1000)  # after the pause, and only once 1000 tokens refilled (1000/s)
    assert clock.now == pytest.approx(101.0, rel=0.001)


def test_a_429_with_headers_syncs_the_budget():
    clock = FakeClock()
    lim = RateLimiter(0, clock=clock, sleep=clock.sleep)
    lim.acquire()
    lim.on_rate_limited(1.0, ResponseInfo(headers(60, 0, "1s")))
    lim.acquire()
    assert clock.now == pytest.approx(101.0, rel=0.001)
    assert lim.interval_s == 0.0


def tokens_headers(remaining: int, reset: str) -> dict[str, str]:
    return headers(48000, remaining, reset, "tokens")  # 800 tokens/s; the server's burst is what the reset shows


def synced_to_a_4000_token_burst() -> tuple[RateLimiter, FakeClock]:
    """A limiter after one answer whose headers show 800 tokens/s, 3,000 of a 4,000 burst left (full in 1.25 s)."""
    clock = FakeClock()
    lim = RateLimiter(0, clock=clock, sleep=clock.sleep)
    lim.acquire(1000)
    lim.on_success(ResponseInfo(tokens_headers(3000, "1.25s"), prompt_tokens=1000, estimated_prompt_tokens=1000))
    return lim, clock


def test_a_request_larger_than_the_budget_goes_alone_and_leaves_the_learnt_budget_its_size():
    lim, clock = synced_to_a_4000_token_burst()
    lim.acquire(6000)  # 4,000 at once (3,000 left, full in 1.25 s): this one goes alone once the window is empty
    big = clock.now
    assert 101.25 <= big <= 101.6
    # The provider shows the level it took below zero as remaining 0 and a reset of (4,000 + 2,000) / 800 s:
    # neither a 6,000-token budget nor an empty one.
    lim.on_success(ResponseInfo(tokens_headers(0, "7.5s"), prompt_tokens=6000, estimated_prompt_tokens=6000))
    lim.acquire(4000)
    assert 7.5 <= clock.now - big <= 9.0
    assert lim.stats().tokens_per_minute == pytest.approx(48000)


def test_a_429_message_does_not_override_the_token_count_its_headers_give():
    lim, clock = synced_to_a_4000_token_burst()
    lim.acquire(1000)
    # 'Used 4000' of a per-minute 'Limit 48000' would read as 44,000 left; the headers say the burst is spent.
    lim.on_rate_limited(5.0, ResponseInfo(tokens_headers(0, "5s"), estimated_prompt_tokens=1000, message=(
        "Rate limit reached on tokens per min (TPM): Limit 48000, Used 4000, Requested 1000.")))
    lim.acquire(4000)  # a full budget's worth: refilled at a little under 800/s, not at once after the pause
    assert clock.now - 100.0 >= 5.4


def test_waiters_for_tokens_go_in_arrival_order_and_a_large_one_is_not_overtaken():
    lim = RateLimiter(0, tokens_per_minute=600)  # 10 tokens/s, 10 at once
    lim.acquire(10)  # the budget is spent
    order: list[str] = []

    def ask(name: str, tokens: int) -> None:
        lim.acquire(tokens)
        order.append(name)

    large = threading.Thread(target=ask, args=("large", 30))  # more than the budget holds: alone, once it is full
    large.start()
    while not lim._queue:  # the large request is waiting in the queue
        time.sleep(0.01)
    small = [threading.Thread(target=ask, args=(f"small{i}", 2)) for i in range(3)]
    for thread in small:
        thread.start()
    for thread in [large, *small]:
        thread.join(timeout=60)  # a stall fails here, not by hanging the suite
    assert order[0] == "large" and sorted(order[1:]) == ["small0", "small1", "small2"]
    assert not lim._queue


def test_a_refused_request_is_not_counted_into_the_budget_its_429_headers_show():
    lim, clock = synced_to_a_4000_token_burst()
    lim.acquire(6000)
    refused = clock.now
    # The provider's window was not quite empty: refused, with the level it holds without this request.
    lim.on_rate_limited(1.0, ResponseInfo(tokens_headers(3900, "125ms"), estimated_prompt_tokens=6000))
    lim.acquire(6000)  # the budget holds 4,000 (not 3,900 + 6,000): it goes alone after the pause
    assert clock.now - refused == pytest.approx(1.0, abs=0.2)
