"""What the batch's rate limiter did, for summaries and benchmarks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Pacing = Literal["headers", "known", "adaptive", "learnt"]
"""What set the pace: the provider's headers, the configured rpm, 429s, or the window learnt from the first 429."""


@dataclass(frozen=True)
class LimiterStats:
    """What the limiter did, for summaries and benchmarks."""

    admitted: int
    successes: int
    rate_limited: int
    waited_s: float
    interval_s: float
    known_rpm: float
    pacing: Pacing = "adaptive"
    """What set the pace last: the provider's headers, the configured rpm, or 429s."""
    requests_per_minute: float | None = None
    """The request ceiling as known (configured or announced); None when only 429s told."""
    tokens_per_minute: float | None = None
    tokens: int = 0
    """Tokens the provider counted (prompt + completion) over the answered requests."""
    span_s: float = 0.0
    """From the first admission to the end (the time the ceiling could have been used)."""
    tail_s: float | None = None
    """From the last model answer to the end."""
    rejected_wait_s: float = 0.0
    """Seconds of pause the 429s imposed (their Retry-After, or the default backoff), summed."""
    learnt_window: str | None = None
    """The request ceiling learnt from 429s ('10 per 5.04 s'), if one was."""

    def ceiling(self) -> dict[str, float | str | None]:
        """Achieved fraction of the request and token ceilings over `span_s` (None when a ceiling is unknown)."""
        def fraction(used: float, per_minute: float | None) -> float | None:
            if not per_minute or self.span_s <= 0:
                return None
            return round(used / (per_minute / 60.0 * self.span_s), 3)

        return {"requests_fraction": fraction(self.successes, self.requests_per_minute),
                "tokens_fraction": fraction(self.tokens, self.tokens_per_minute),
                "limiter_wait_s": self.waited_s, "tail_s": self.tail_s, "span_s": self.span_s,
                "rate_limited": self.rate_limited, "rate_limited_wait_s": self.rejected_wait_s,
                "learnt_window": self.learnt_window}
