"""What a provider says about its rate limits: `x-ratelimit-*` headers, `Retry-After`, 429 bodies.

OpenAI-style endpoints announce both budgets on every response:

    x-ratelimit-limit-requests: 120        x-ratelimit-limit-tokens: 40000
    x-ratelimit-remaining-requests: 1      x-ratelimit-remaining-tokens: 38211
    x-ratelimit-reset-requests: 480ms      x-ratelimit-reset-tokens: 2.68s

(`limit` is per minute, `remaining` what may be sent now, `reset` the time until the budget is full again:
OpenAI's "Rate limits" guide, which also warns that limits may be enforced over shorter periods, so a
429 can come under a large `remaining`: the limiter learns that burst apart from the minute budget).
A 429 body often names the token limit:
"Rate limit reached ... on tokens per min (TPM): Limit 30000, Used 29500, Requested 1200".
Pure parsing, no HTTP client imported: the batch limiter uses it before langchain is loaded.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["requests", "tokens"]

_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)\s*(ms|h|m|s)?", re.IGNORECASE)
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}
_BODY_LIMIT = re.compile(r"on (requests|tokens) per (min|minute|day|hour)\b.*?Limit:?\s*([\d,]+)"
                         r"(?:.*?Used:?\s*([\d,]+))?", re.IGNORECASE | re.DOTALL)
_BODY_ABBREV = {"rpm": ("requests", "min"), "tpm": ("tokens", "min"), "rpd": ("requests", "day"),
                "tpd": ("tokens", "day")}
_PERIOD_S = {"min": 60.0, "minute": 60.0, "hour": 3600.0, "day": 86400.0}


@dataclass(frozen=True)
class Budget:
    """One announced budget (requests or tokens): its size, what is left, and when it is full again."""

    kind: Kind
    limit: float | None = None
    remaining: float | None = None
    reset_s: float | None = None

    @property
    def rate_per_s(self) -> float | None:
        """The refill rate it implies: `limit` per minute (OpenAI's convention), or slower when the reset says so.

        (limit - remaining) / reset is what refills in `reset` seconds; a per-day budget (some providers
        report requests per day in the same header) shows up that way as the slower of the two. Never faster:
        `remaining` may be what a shorter burst leaves (sendable now), and its reset is until that burst is full.
        """
        if not self.limit or self.limit <= 0:
            return None
        rate = self.limit / 60.0
        if self.remaining is not None and self.reset_s and self.reset_s > 0 and self.limit > self.remaining:
            rate = min(rate, (self.limit - self.remaining) / self.reset_s)
        return rate


@dataclass(frozen=True)
class LimitNotice:
    """A limit named in a 429's message: per-second rate, and how much was left when it was refused."""

    kind: Kind
    rate_per_s: float
    remaining: float | None


def lower_headers(headers: Any) -> dict[str, str]:
    """Any header mapping (httpx.Headers, dict, None) as a plain dict with lower-cased names."""
    if not headers:
        return {}
    items = headers.items() if hasattr(headers, "items") else headers
    return {str(k).lower(): str(v) for k, v in items}


def parse_duration(value: str | None) -> float | None:
    """Seconds from '480ms', '2.68s', '6m0s', '1h2m', or bare seconds ('0.5'); None if unreadable."""
    if value is None or not str(value).strip():
        return None
    text = str(value).strip().lower()
    total, pos = 0.0, 0
    for match in _DURATION.finditer(text):
        if text[pos:match.start()].strip():
            return None  # something that is not a number-unit pair
        total += float(match.group(1)) * _UNIT_S[match.group(2)]
        pos = match.end()
    if pos == 0 or text[pos:].strip():
        return None
    return total


def _number(value: str | None) -> float | None:
    try:
        return float(str(value).replace(",", "").strip()) if value is not None else None
    except ValueError:
        return None


def budget(headers: Mapping[str, str], kind: Kind) -> Budget | None:
    """The `kind` budget announced in (lower-cased) `headers`; None when the provider sent none."""
    limit = _number(headers.get(f"x-ratelimit-limit-{kind}"))
    remaining = _number(headers.get(f"x-ratelimit-remaining-{kind}"))
    if limit is None and remaining is None:
        return None
    return Budget(kind, limit, remaining, parse_duration(headers.get(f"x-ratelimit-reset-{kind}")))


def retry_after_s(headers: Mapping[str, str]) -> float | None:
    """The server's wait hint in seconds: `retry-after-ms` (more precise) or `retry-after` (seconds)."""
    ms = _number(headers.get("retry-after-ms"))
    if ms is not None and ms >= 0:
        return ms / 1000.0
    seconds = _number(headers.get("retry-after"))
    return seconds if seconds is not None and seconds >= 0 else None


def limit_from_message(message: str) -> LimitNotice | None:
    """The limit a 429's text names ('on tokens per min (TPM): Limit 30000, Used 29500, ...'), if any."""
    if not message:
        return None
    match = _BODY_LIMIT.search(message)
    if match:
        return _notice(match.group(1).lower(), match.group(2).lower(), _number(match.group(3)),
                       _number(match.group(4)))
    abbrev = re.search(r"\b(RPM|TPM|RPD|TPD)\)?:?\s*Limit:?\s*([\d,]+)(?:.*?Used:?\s*([\d,]+))?", message,
                       re.IGNORECASE | re.DOTALL)
    if not abbrev:
        return None
    kind, period = _BODY_ABBREV[abbrev.group(1).lower()]
    return _notice(kind, period, _number(abbrev.group(2)), _number(abbrev.group(3)))


def _notice(kind: str, period: str, limit: float | None, used: float | None) -> LimitNotice | None:
    if not limit or limit <= 0:
        return None
    remaining = max(0.0, limit - used) if used is not None else None
    return LimitNotice("tokens" if kind == "tokens" else "requests", limit / _PERIOD_S[period], remaining)


def capacity_seen(remaining: float | None, reset_s: float | None, rate: float, cost: float) -> float | None:
    """The least capacity an answer's numbers prove; None when they prove nothing.

    Only a positive remaining says what the level was: the provider shows a level run negative by a request
    larger than the budget (sent alone into the empty window) as 0, so remaining + cost would overstate it.
    The reset ("until full") then gives the capacity itself: remaining + reset * rate.
    """
    if not remaining or remaining <= 0:
        return None
    seen = remaining + cost  # the level before this request took its share
    return max(seen, remaining + reset_s * rate) if reset_s is not None else seen


AGREE = 0.1
"""Two answers' refill rates agree when they differ by at most this share."""
RESETS_APART = 0.2
"""... and say something only when their resets differ by at least this share."""


def filling_rate(budget: Budget) -> float | None:
    """The rate at which the budget fills to `limit` in `reset`: (limit - remaining) / reset; None when full."""
    if not budget.limit or budget.remaining is None or not budget.reset_s or budget.reset_s <= 0 \
            or budget.limit <= budget.remaining:
        return None
    return (budget.limit - budget.remaining) / budget.reset_s


def short_period_rate(earlier: Budget, later: Budget) -> float | None:
    """The rate of a `limit` that is not per minute (a 5 s figure): two answers fill it at one faster rate.

    A provider announcing `limit` as its burst (4,000 tokens per 5 s) shows remaining and reset of that burst:
    every answer then fills `limit` at the same rate, 12 times the limit / 60 read as per minute. A per-minute
    `limit` with the remaining of a shorter burst fills at a rate that changes from answer to answer (it is not
    the budget `limit` speaks of), so it is not taken. None unless two answers agree on a rate above limit / 60.
    """
    first, second = filling_rate(earlier), filling_rate(later)
    if first is None or second is None or earlier.limit != later.limit or not later.limit:
        return None
    assert earlier.reset_s is not None and later.reset_s is not None
    apart = abs(earlier.reset_s - later.reset_s) / max(earlier.reset_s, later.reset_s)
    if apart < RESETS_APART or abs(first - second) > AGREE * max(first, second):
        return None
    rate = (first + second) / 2
    return rate if rate > later.limit / 60.0 * (1 + AGREE) else None
