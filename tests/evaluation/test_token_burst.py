"""Per-minute token headers over a shorter enforced burst: the limiter learns the burst from one 429 (fake clock).

The provider double follows OpenAI's convention (its "Rate limits" guide): `x-ratelimit-limit-tokens` per
minute, `remaining` the minute budget's level, `reset` until it is full, and it enforces the limit over a
shorter period (4,000 tokens per 5 s at 48,000 per minute), answering 429 with Retry-After under a large
`remaining`. Also a provider whose minute is the only window: the headers tell everything; and one that
announces `limit` as the 5 s figure itself (4,000), which must not be read as 4,000 per minute (12 times slower).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from evaluation.limiter import RateLimiter
from models.client import ResponseInfo
from tests.support.fake_clock import FakeClock

TPM = 48_000.0
RATE = TPM / 60.0


@dataclass
class MinuteProvider:
    """A token budget of `burst` refilling at TPM / 60, announced as the minute's (capacity TPM) budget."""

    clock: FakeClock
    burst: float
    level: float = 0.0
    minute: float = TPM
    at: float = 0.0

    def __post_init__(self) -> None:
        self.level, self.at = self.burst, self.clock.now

    def _refill(self) -> None:
        elapsed, self.at = self.clock.now - self.at, self.clock.now
        self.level = min(self.burst, self.level + elapsed * RATE)
        self.minute = min(TPM, self.minute + elapsed * RATE)

    def headers(self) -> dict[str, str]:
        return {"x-ratelimit-limit-tokens": f"{TPM:g}", "x-ratelimit-remaining-tokens": str(int(self.minute)),
                "x-ratelimit-reset-tokens": f"{(TPM - self.minute) / RATE:.3f}s"}

    def send(self, tokens: float) -> tuple[bool, float, dict[str, str]]:
        """(admitted, retry_after, headers)."""
        self._refill()
        if self.level < tokens:
            return False, (tokens - self.level) / RATE, self.headers()
        self.level -= tokens
        self.minute -= tokens
        return True, 0.0, self.headers()


class BurstProvider(MinuteProvider):
    """The same budget, its headers of the burst: `limit` the 5 s figure, `remaining` and `reset` of that burst."""

    def headers(self) -> dict[str, str]:
        return {"x-ratelimit-limit-tokens": f"{self.burst:g}", "x-ratelimit-remaining-tokens": str(int(self.level)),
                "x-ratelimit-reset-tokens": f"{(self.burst - self.level) / RATE:.3f}s"}


def run(provider: MinuteProvider, clock: FakeClock, seconds: float, tokens: int = 1000) -> tuple[float, int]:
    """One request after another for `seconds` (0.3 s each): (tokens per second achieved, 429s)."""
    limiter = RateLimiter(0, clock=clock, sleep=clock.sleep)
    start, sent, refused = clock.now, 0, 0
    while clock.now - start < seconds:
        limiter.acquire(tokens)
        ok, retry, headers = provider.send(tokens)
        if not ok:
            refused += 1
            message = f"Rate limit reached on tokens per min (TPM): Limit {TPM:g}, Used 0, Requested {tokens}."
            limiter.on_rate_limited(retry, ResponseInfo(headers=headers, message=message))
            clock.sleep(retry)  # the model client waits the Retry-After
            continue
        clock.sleep(0.3)
        sent += tokens
        limiter.on_success(ResponseInfo(headers=headers, prompt_tokens=tokens, completion_tokens=0,
                                        estimated_prompt_tokens=tokens))
    return sent / (clock.now - start), refused


@pytest.mark.parametrize(("provider", "burst_s"), [(MinuteProvider, 5.0), (MinuteProvider, 60.0), (BurstProvider, 5.0)])
def test_the_token_ceiling_is_reached_with_few_429s(provider, burst_s):
    clock = FakeClock()
    rate, refused = run(provider(clock, RATE * burst_s), clock, seconds=240.0)
    assert refused <= 3
    assert rate >= 0.9 * RATE  # the minute's rate, the burst at most a few seconds' worth of it


def test_a_429_under_a_large_remaining_teaches_the_burst_and_the_minute_stays_the_rate():
    clock = FakeClock()
    provider = MinuteProvider(clock, RATE * 5)
    limiter = RateLimiter(0, clock=clock, sleep=clock.sleep)
    limiter.acquire(1000)
    ok, _, headers = provider.send(1000)
    limiter.on_success(ResponseInfo(headers=headers, prompt_tokens=1000, estimated_prompt_tokens=1000))
    assert ok and limiter.stats().tokens_per_minute == pytest.approx(TPM, rel=0.01)
    provider.level = 0.0  # another client of the key spent the burst; the minute still shows plenty
    limiter.acquire(1000)
    ok, retry, headers = provider.send(1000)
    assert not ok and int(headers["x-ratelimit-remaining-tokens"]) > 40_000
    limiter.on_rate_limited(retry, ResponseInfo(headers=headers, message="Rate limit reached on tokens per min"))
    clock.sleep(retry)
    before = clock.now
    limiter.acquire(1000)  # fits again when the provider said, not at once because the minute looks full
    assert clock.now >= before - 1e-6 and provider.send(1000)[0]
    assert limiter.stats().tokens_per_minute == pytest.approx(TPM, rel=0.01)


def test_a_limit_that_is_the_5_s_figure_is_read_at_its_own_rate_once_two_answers_agree():
    clock = FakeClock()
    provider = BurstProvider(clock, RATE * 5)
    limiter = RateLimiter(0, clock=clock, sleep=clock.sleep)
    for expected in (4000 / 60, RATE):  # one answer: per minute, as documented; two that agree: the burst's rate
        limiter.acquire(1000)
        ok, _, headers = provider.send(1000)
        limiter.on_success(ResponseInfo(headers=headers, prompt_tokens=1000, estimated_prompt_tokens=1000))
        assert ok and limiter.stats().tokens_per_minute == pytest.approx(expected * 60, rel=0.02)
