"""A provider's budget as the batch sees it: a bucket that refills at a rate, synced to what the provider says.

Used twice by the limiter: for requests (cost 1) once `x-ratelimit-*-requests` headers arrive, and
for tokens (cost = a request's estimated tokens) when LLM_TOKENS_PER_MINUTE is set or learnt. A
request waits until its cost fits (`ready_at`), then takes it (`take`); every answer may re-sync the
level, so waiters re-check when they wake instead of holding a promised slot.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass


@dataclass
class Ticket:
    """One admitted request, as the budgets remember it until its answer arrives."""

    seq: int
    at: float
    requests: float
    tokens: float
    answered: bool = False
    """The provider took it (its answer came)."""


class Bucket:
    """Level, refill rate and capacity of one budget (not thread-safe: the limiter holds its lock)."""

    def __init__(self, rate: float = 0.0, capacity: float = 0.0, *, safety: float = 0.01,
                 window_s: float | None = None) -> None:
        """`rate` per second (0 = unknown: no constraint); `safety` slows the assumed refill a little.

        With `window_s`, the refill is slowed further by capacity / window_s, so that no `window_s` window
        (a provider's minute) ever holds more than rate * window_s, burst included.
        """
        self.rate = rate
        self.capacity = capacity
        self.level = capacity
        self.safety = safety
        self.window_s = window_s
        self.synced = False
        self._at: float | None = None

    @property
    def known(self) -> bool:
        """Whether this budget constrains anything yet."""
        return self.rate > 0

    @property
    def refill_rate(self) -> float:
        """The rate the level is assumed to refill at (a little under `rate`)."""
        slower = self.capacity / self.window_s if self.window_s else 0.0
        return max(self.rate * 0.5, self.rate * (1 - self.safety) - slower)

    def _refill(self, now: float) -> None:
        if self._at is not None and now > self._at:
            self.level = min(self.capacity, self.level + (now - self._at) * self.refill_rate)
        self._at = now if self._at is None else max(self._at, now)

    def ready_at(self, cost: float, now: float) -> float:
        """When `cost` fits: now, or when the refill will have covered it.

        A request larger than the whole capacity goes once the budget is full (the window empty: providers
        admit it then, and the level runs negative by the excess); waiting for more would wait forever
        whenever the provider's headers keep the capacity at its announced size.
        """
        if not self.known:
            return now
        self._refill(now)
        need = min(cost, self.capacity)
        return now if self.level >= need - 1e-9 else now + (need - self.level) / self.refill_rate

    def oversized(self, cost: float) -> bool:
        """True when `cost` is more than the budget holds at once."""
        return self.known and cost > self.capacity

    def take(self, cost: float, now: float) -> None:
        """Spend `cost` (the level may dip below zero by what a large request exceeds the capacity)."""
        if self.known:
            self._refill(now)
            self.level -= cost

    def refund(self, amount: float, now: float) -> None:
        """Give back (or, negative, charge more than) what a reservation took."""
        if self.known:
            self._refill(now)
            self.level = min(self.capacity, self.level + amount)

    def learn(self, rate: float, capacity: float, now: float) -> None:
        """A rate and burst capacity from the provider's own numbers (they replace any configured guess)."""
        self._refill(now)
        first = not self.known
        self.rate, self.capacity = rate, max(capacity, 1.0)
        if first:
            self.level = self.capacity
        self.level = min(self.level, self.capacity)

    def sync(self, remaining: float, ticket: Ticket, later: float, now: float) -> None:
        """Correct the level by `remaining` as the provider counted it when `ticket` reached it.

        `later` is what the batch spent after that ticket (not yet in the provider's count). The provider
        counted a little after the ticket was admitted, so `told` runs slightly high: it lowers the
        level at once, but raises it only when the batch's own count is clearly too low (more than a
        request's worth, or a tenth of the budget), e.g. after another client of the key went quiet.
        """
        if not self.known:
            return
        self._refill(now)
        told = min(remaining + max(0.0, now - ticket.at) * self.refill_rate - later, self.capacity)
        if not self.synced or told < self.level or told > self.level + max(1.0, 0.1 * self.capacity):
            self.level = told
        self.synced = True


class Tickets:
    """Recently admitted requests in order, to tell which reservations a provider's count has not seen."""

    def __init__(self, keep_s: float = 120.0) -> None:
        self._items: deque[Ticket] = deque()
        self._keep_s = keep_s
        self._seq = 0

    def add(self, now: float, requests: float, tokens: float) -> Ticket:
        """Remember a new admission."""
        self._seq += 1
        ticket = Ticket(self._seq, now, requests, tokens)
        self._items.append(ticket)
        while self._items and now - self._items[0].at > self._keep_s:
            self._items.popleft()
        return ticket

    def after(self, ticket: Ticket) -> tuple[float, float]:
        """(requests, tokens) reserved by admissions after `ticket`."""
        later = [t for t in self._items if t.seq > ticket.seq]
        return sum(t.requests for t in later), sum(t.tokens for t in later)

    def starts_before(self, ticket: Ticket, *, later_too: bool = False) -> list[float]:
        """Start times of the admissions before `ticket` (and after it, with `later_too`), refused ones left out."""
        return [t.at for t in self._items if (t.seq < ticket.seq or (later_too and t.seq > ticket.seq))
                and t.requests > 0]

    def answered_after(self, ticket: Ticket) -> list[Ticket]:
        """The admissions after `ticket` that the provider already took."""
        return [t for t in self._items if t.seq > ticket.seq and t.answered]

    def forget(self, ticket: Ticket) -> None:
        """A refused request: the provider never counted it."""
        ticket.requests = ticket.tokens = 0.0
