"""The limiter's budgets: paced by the provider's headers, admitted against a token budget, taught by 429s."""

from __future__ import annotations

import pytest

from evaluation.limiter import RateLimiter
from models.client import ResponseInfo
from tests.evaluation.test_limiter import FakeClock


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
