"""The burst a provider enforces under its announced minute: learnt from a token 429 under a large `remaining`.

OpenAI announces `x-ratelimit-limit-tokens` per minute and warns that limits may be enforced over
shorter periods: a provider may show 40,000 tokens remaining and still refuse a 1,500-token request
because its 5-second share is spent. Such a refusal says the budget that binds is a burst much smaller
than the minute's; the limiter then keeps its token bucket at that burst (the minute's rate still
refills it) and stops raising its level to the minute's `remaining`. A further such refusal shrinks it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from evaluation.rate_bucket import Bucket
from models.ratelimit_headers import budget, limit_from_message

if TYPE_CHECKING:  # the limiter is imported before langchain is needed
    from models.client import ResponseInfo

BURST_S = 1.0
"""The burst first assumed: this many seconds of the minute's rate (or the refused request, if larger)."""
SHRINK = 0.75
"""A refusal under a burst already learnt shrinks it by this factor (never below the refused request)."""


def refused_burst(tokens: Bucket, headers: Mapping[str, str], message: str, asked: float,
                  learnt: float | None) -> float | None:
    """The token burst a 429 teaches; None when the headers' `remaining` explains it (or it was not about tokens)."""
    announced = budget(headers, "tokens")
    if not tokens.known or announced is None or announced.remaining is None or announced.remaining < asked:
        return None
    notice = limit_from_message(message)
    requests = budget(headers, "requests")
    if (notice is not None and notice.kind != "tokens") or (
            notice is None and requests is not None and requests.remaining is not None and requests.remaining < 1):
        return None  # the request budget refused it
    if learnt is not None:
        return max(asked, learnt * SHRINK)
    return max(asked, min(tokens.capacity, tokens.rate * BURST_S))


def learn_burst(tokens: Bucket, info: ResponseInfo, asked: float, retry_after: float | None, learnt: float | None,
                now: float) -> float | None:
    """After a refusal: the burst now known (`learnt` when this one teaches nothing); the bucket keeps to it.

    The level is set so that the refused request fits again at Retry-After, when the provider said it would.
    """
    burst = refused_burst(tokens, info.headers, info.message, asked, learnt)
    if burst is None:
        return learnt
    tokens.learn(tokens.rate, burst, now)
    tokens.level = min(tokens.level, asked - tokens.rate * (retry_after or 0.0))
    return burst
