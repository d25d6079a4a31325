"""The provider's `x-ratelimit-*` headers applied to the limiter's two budgets: their rate, burst and level.

Read as OpenAI documents them: `limit` is per minute (unless two answers show it is the figure of a
shorter period, `models.ratelimit_headers.short_period_rate`), `remaining` is what may be sent now,
`reset` the time until the budget is full. The rate and the capacity they show are learnt; the level is
synced to `remaining`, made precise by the reset's milliseconds (and, behind a remaining of 0, by how far
below zero a request larger than the budget took it). A token burst learnt from a 429
(`evaluation.token_burst`) caps the capacity, and a minute's `remaining` above it says nothing of its level.
"""

from __future__ import annotations

from collections.abc import Mapping

from evaluation.rate_bucket import Bucket, Ticket
from models.ratelimit_headers import Budget, Kind, budget, capacity_seen, short_period_rate


class HeaderSync:
    """The latest headers per kind, and the budgets they sync (not thread-safe: the limiter holds its lock)."""

    def __init__(self, requests: Bucket, tokens: Bucket, *, burst_s: float) -> None:
        """`burst_s`: before a burst is proven, a budget is assumed to let this many seconds' worth through at once."""
        self._buckets: dict[Kind, Bucket] = {"requests": requests, "tokens": tokens}
        self._burst_s = burst_s
        self._announced: dict[Kind, Budget] = {}  # the latest answer's headers, per kind
        self._short_rate: dict[Kind, float] = {}  # a `limit` found to be of a period shorter than the minute

    def apply(self, headers: Mapping[str, str], ticket: Ticket, later: tuple[float, float], now: float,
              token_burst: float | None) -> tuple[set[Kind], set[Kind]]:
        """Sync both budgets to the headers of `ticket`'s answer; the kinds announced, and those whose rate was learnt.

        `later`: the (requests, tokens) reserved by admissions after `ticket` (not yet in the provider's count).
        """
        found: set[Kind] = set()
        rated: set[Kind] = set()
        budgets: tuple[tuple[Kind, float, float], ...] = (
            ("requests", 1.0, later[0]), ("tokens", ticket.tokens, later[1]))
        for kind, cost, after in budgets:
            announced = budget(headers, kind)
            if announced is None:
                continue
            found.add(kind)
            bucket, burst = self._buckets[kind], token_burst if kind == "tokens" else None
            rate = self._rate_of(kind, announced)
            if rate:
                self._learn(bucket, announced, rate, cost, burst, now)
                rated.add(kind)
            level = self._level(bucket, announced, burst)
            if level is not None:
                bucket.sync(level, ticket, after, now)
        return found, rated

    def _rate_of(self, kind: Kind, announced: Budget) -> float | None:
        """`limit` per minute, unless two answers showed it is the figure of a shorter period (then its rate)."""
        earlier, self._announced[kind] = self._announced.get(kind), announced
        if earlier is not None and (short := short_period_rate(earlier, announced)) is not None:
            self._short_rate[kind] = short
        return self._short_rate.get(kind) or announced.rate_per_s

    def _learn(self, bucket: Bucket, announced: Budget, rate: float, cost: float, burst: float | None,
               now: float) -> None:
        """The rate, and the largest capacity the provider's numbers have shown (capped by a learnt `burst`)."""
        seen = capacity_seen(announced.remaining, announced.reset_s, rate, cost)
        guess = 0.0 if bucket.known else max(cost, rate * self._burst_s)  # nothing proven yet
        capacity = max(bucket.capacity if bucket.synced else 0.0, seen or guess, 1.0)
        if burst:  # the minute's numbers, a shorter burst enforced
            capacity = min(capacity, burst)
        bucket.learn(rate, min(capacity, announced.limit or capacity), now)

    @staticmethod
    def _level(bucket: Bucket, announced: Budget, burst: float | None) -> float | None:
        """The level `remaining` tells; None without one, or when a minute's remaining is over the burst."""
        if announced.remaining is None or announced.remaining > (burst or float("inf")):
            return None
        level = announced.remaining
        if announced.reset_s is not None and bucket.known:
            # "until full" in ms pins down the fraction the whole-number remaining rounds away
            precise = bucket.capacity - announced.reset_s * bucket.rate
            # ... and, behind a remaining of 0, how far below zero a request larger than the budget took it
            if announced.remaining - 0.01 <= precise < announced.remaining + 1 or \
                    (announced.remaining <= 0 and precise < 0):
                level = precise
        return level
