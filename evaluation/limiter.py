"""The one rate-aware limiter a batch shares: the provider's budgets, smooth spacing, a common pause on 429.

Every model request of every concurrent task asks `acquire(estimated_tokens)` first (the model client
does, via the `RequestGate` protocol), so the whole batch speaks to the provider at one controlled pace
(docs/context-and-rate-limits.md tells the whole story):

- **the provider's headers** (`x-ratelimit-{limit,remaining,reset}-{requests,tokens}`: limit per minute,
  remaining = what may be sent now, reset = until full) sync a request and a token budget
  (`evaluation.rate_bucket.Bucket`, through `evaluation.header_sync`) to what the provider counted; a token 429
  under a large `remaining` teaches the shorter burst it enforces (`evaluation.token_burst`);
- **known limits** (`LLM_REQUESTS_PER_MINUTE`, `LLM_TOKENS_PER_MINUTE` or a 429's message), no headers:
  requests start one `60/rpm` interval apart; a request goes only when its estimated tokens fit;
- **unknown limit**: full speed until the first 429, which tells the ceiling (`evaluation.request_window`:
  the requests admitted before it, over the time since the first plus its Retry-After); without a
  Retry-After, the interval follows the pace that got through and shrinks slowly while no 429 comes
  (`evaluation.spacing`);
- **one queue for tokens**: requests waiting for tokens go in arrival order; one larger than the whole
  budget goes alone once it is full; waiters look again whenever an answer or a 429 moves a budget;
- **the provider's count is exact**: a refused request is not in it, a request larger than the budget
  shows as remaining 0 (its reset tells how far below zero);
- **critical path first**: among requests ready to go, the one whose task has made the most requests
  goes first (`evaluation.critical_path`), so a long chain is not starved behind one-step tasks;
- **on 429** everyone pauses until the server's `Retry-After` (or a default backoff) and restarts
  spaced out, so a limit hit by one task never turns into a retry storm that fails another.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from config import Settings
from evaluation.critical_path import Waiters
from evaluation.header_sync import HeaderSync
from evaluation.limiter_stats import LimiterStats, Pacing
from evaluation.rate_bucket import Bucket, Ticket, Tickets
from evaluation.request_window import FirstRefusal, RequestLog, learn_window
from evaluation.spacing import Spacing
from evaluation.token_burst import learn_burst
from models.ratelimit_headers import Kind, limit_from_message

if TYPE_CHECKING:  # the limiter is imported before langchain is needed
    from models.client import ResponseInfo


class RunStopped(RuntimeError):
    """Raised by `acquire()` once the run's stop event is set: the request is not sent."""


class RateLimiter:
    """Shared admission control for one run's model requests (implements `models.client.RequestGate`)."""

    WINDOW_S = 60.0
    """The token budget's window: no minute ever holds more than its rate allows (providers count per minute)."""
    STOP_POLL_S = 0.25
    """Longest a waiter goes without looking at the run's stop event."""
    YIELD_S = 0.002
    """A ready request behind one further along looks again this soon (or when that one goes)."""
    TOKEN_BURST_S = 1.0
    """Without headers, a configured or learnt token budget is assumed to let one second's worth through at once."""

    def __init__(self, requests_per_minute: float = 0.0, *, tokens_per_minute: float = 0.0, safety: float = 0.02,
                 no_hint_pause: float = 10.0, recovery: float = 0.01, calm_s: float = 2.0,
                 stop: threading.Event | None = None, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] | None = None) -> None:
        """Limits as configured (0 = unknown); the rest tunes the pacing.

        `safety` widens the known interval a little (clock jitter); `recovery` is the fraction the interval
        shrinks per success once `calm_s` seconds passed without a 429; `no_hint_pause` is the common pause
        when a 429 carries no Retry-After.
        """
        if requests_per_minute < 0 or tokens_per_minute < 0:
            raise ValueError("requests_per_minute and tokens_per_minute must be >= 0 (0 = unknown)")
        self.known_rpm = float(requests_per_minute)
        self._spacing = Spacing(requests_per_minute, safety=safety, recovery=recovery, calm_s=calm_s)
        self._no_hint_pause = no_hint_pause
        self._stop = stop
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        """Notified whenever the budgets or the queue change: waiters look again at once."""
        self._next_at = float("-inf")
        self._paused_until = float("-inf")
        self._started: float | None = None
        self._last_answer: float | None = None
        self._admitted = self._n_success = self._n_limited = self._tokens_used = 0
        self._waited = 0.0
        self._requests = Bucket(safety=safety / 2)
        token_rate = tokens_per_minute / 60.0
        self._tokens = Bucket(token_rate, token_rate * self.TOKEN_BURST_S, safety=safety / 2, window_s=self.WINDOW_S)
        self._headers = HeaderSync(self._requests, self._tokens, burst_s=self.TOKEN_BURST_S)
        self._completion_mean = 0.0
        self._tickets = Tickets()
        self._local = threading.local()
        self._pacing: Pacing = "known" if requests_per_minute > 0 else "adaptive"
        self._log: RequestLog | None = None
        self._rejected_wait = 0.0
        self._queue: deque[tuple[int, float]] = deque()
        """(waiter, tokens) of requests waiting for the token budget, in arrival order."""
        self._waiters = 0
        self._token_burst: float | None = None  # learnt from a token 429 under a large remaining
        self._ready = Waiters()  # every request in acquire(): the one whose task went furthest goes first

    @classmethod
    def from_settings(cls, settings: Settings, *, stop: threading.Event | None = None) -> RateLimiter:
        """The limiter a batch uses: the configured rpm and tpm (0 = learn them) and the configured backoff."""
        return cls(settings.LLM_REQUESTS_PER_MINUTE, tokens_per_minute=settings.LLM_TOKENS_PER_MINUTE,
                   no_hint_pause=settings.RATE_LIMIT_RETRY_BASE_DELAY, stop=stop)

    # -- RequestGate ------------------------------------------------------------------------------
    def acquire(self, estimated_tokens: int = 0) -> None:
        """Block until this request fits every known budget and spacing; a 429 meanwhile sends it behind the pause."""
        tokens = float(estimated_tokens) + self._completion_mean if estimated_tokens else 0.0
        first: float | None = None
        place: int | None = None
        with self._lock:
            key = self._ready.join(threading.get_ident())
            try:
                while True:
                    self._check_stop()
                    now = self._clock()
                    if self._started is None:
                        self._started = now
                    first = now if first is None else first
                    slot = max(now, self._next_at, self._paused_until, self._requests.ready_at(1.0, now),
                               self._token_slot(tokens, place, now),
                               self._log.ready_at(now) if self._log is not None else now)
                    held = self._log is not None and slot <= now and self._log.free(now) <= self._ready.ahead(key)
                    if self._ready.may_go(key, now + self.YIELD_S if held else slot, now):
                        self._admit(tokens, now, first)
                        return
                    if place is None and tokens and self._tokens.known:
                        self._waiters += 1
                        place = self._waiters
                        self._queue.append((place, tokens))
                    self._wait(max(slot - now, self.YIELD_S))
            finally:
                self._ready.leave(key)
                if place is not None:
                    self._queue = deque(item for item in self._queue if item[0] != place)
                self._changed.notify_all()  # the next in line may go now

    def take_thread_wait(self) -> float:
        """Seconds this thread's requests waited since the last call (a task's own wait); its task starts anew."""
        waited = getattr(self._local, "waited", 0.0)
        self._local.waited = 0.0
        self._ready.restart(threading.get_ident())
        return waited

    def _token_slot(self, tokens: float, place: int | None, now: float) -> float:
        """When this request's tokens fit; behind every request that was waiting for tokens before it."""
        ahead = [cost for waiter, cost in self._queue if place is None or waiter < place]
        if not ahead:
            return self._tokens.ready_at(tokens, now)
        return max(now + 0.01, self._tokens.ready_at(min(sum(ahead) + tokens, self._tokens.capacity), now))

    def _admit(self, tokens: float, now: float, first: float) -> None:
        self._requests.take(1.0, now)
        self._tokens.take(tokens, now)
        if self._log is not None:
            self._log.take(now)
        self._next_at = max(self._next_at, now) + self._spacing.interval
        self._admitted += 1
        self._waited += now - first
        self._local.waited = getattr(self._local, "waited", 0.0) + (now - first)
        self._local.ticket = self._tickets.add(now, 1.0, tokens)
        self._ready.served(threading.get_ident())

    def on_success(self, info: ResponseInfo | None = None) -> None:
        """A request went through: count it and its tokens, sync to the provider's headers, speed up if calm."""
        with self._lock:
            now = self._clock()
            self._n_success += 1
            self._last_answer = now
            self._spacing.succeeded(now)
            ticket = self._take_ticket()
            if ticket is not None:
                ticket.answered = True
                if self._log is not None:
                    self._log.answered(ticket.seq, ticket.at)
            if info is not None:
                self._account_tokens(info, ticket, now)
                if ticket is not None:
                    self._apply_headers(info, ticket, now)
            self._changed.notify_all()

    def on_rate_limited(self, retry_after: float | None, info: ResponseInfo | None = None) -> None:
        """A 429: everyone pauses until Retry-After; the budgets follow the provider's numbers, if any.

        Without numbers, the interval widens (once per episode).
        """
        with self._lock:
            now = self._clock()
            self._n_limited += 1
            ticket = self._take_ticket()
            explained = False
            if ticket is not None:  # refused: the provider never counted it
                asked = ticket.tokens
                self._requests.refund(ticket.requests, now)
                self._tokens.refund(ticket.tokens, now)
                if self._log is not None:
                    self._log.refund(ticket.at)
                self._tickets.forget(ticket)  # before the headers: what they count holds everything but this one
                if info is not None:
                    announced = self._apply_headers(info, ticket, now)
                    self._token_burst = learn_burst(self._tokens, info, asked, retry_after, self._token_burst, now)
                    # The headers' count is exact; a message's 'Used' is per minute, not of the burst the bucket holds.
                    explained = bool(announced) | self._apply_notice(info, ticket, now, skip=announced, asked=asked)
                if not explained and not self._requests.known and not self.known_rpm:
                    explained = self._learn_window(ticket, now, retry_after)
            pause = max(0.0, retry_after if retry_after is not None else self._no_hint_pause)
            self._rejected_wait += pause
            self._paused_until = max(self._paused_until, now + pause)
            self._spacing.refused(now, retry_after, pause, self._paused_until, explained=explained,
                                  windowed=self._log is not None)
            self._next_at = self._paused_until
            self._changed.notify_all()

    # -- introspection ----------------------------------------------------------------------------
    @property
    def interval_s(self) -> float:
        """Current minimum gap between request starts (0 = no spacing)."""
        return self._spacing.interval

    def stats(self) -> LimiterStats:
        """Counters since the limiter was made; span and tail end now."""
        with self._lock:
            now = self._clock()
            rpm = self._requests.rate * 60.0 if self._requests.known else (self.known_rpm or None)
            if rpm is None and self._log is not None:
                rpm = self._log.limit.per_minute
            tpm = self._tokens.rate * 60.0 if self._tokens.known else None
            span = now - self._started if self._started is not None else 0.0
            tail = now - self._last_answer if self._last_answer is not None else None
            return LimiterStats(self._admitted, self._n_success, self._n_limited, round(self._waited, 3),
                                round(self._spacing.interval, 4), self.known_rpm, self._pacing,
                                round(rpm, 3) if rpm else None, round(tpm, 1) if tpm else None, self._tokens_used,
                                round(span, 3), None if tail is None else round(tail, 3), round(self._rejected_wait, 3),
                                None if self._log is None else
                                f"{self._log.limit.requests} per {self._log.span_s:.2f} s")

    # -- internals --------------------------------------------------------------------------------
    def _learn_window(self, ticket: Ticket, now: float, retry_after: float | None) -> bool:
        """A 429 that names no limit: learn the request window from it (first time), or tighten it; True if so."""
        if self._log is not None:
            self._log.refused(ticket.seq, ticket.at, retry_after)
            return True
        learnt = learn_window(self._tickets.starts_before(ticket), ticket.at, retry_after)
        if learnt is None:
            return False
        # No share of the window as margin: its length is the provider's own (its Retry-After); what varies is the
        # moment a request reaches it, an absolute jitter the log's slack covers and learns.
        self._log = RequestLog(learnt, FirstRefusal(ticket.seq, ticket.at + (retry_after or 0.0), now), margin=0.0)
        for later in self._tickets.answered_after(ticket):  # started after it, yet the provider took it first
            self._log.answered(later.seq, later.at)
        self._log.seed(self._tickets.starts_before(ticket, later_too=True))
        self._spacing.clear()  # the window, not a spacing, sets the pace now
        self._pacing = "learnt"
        return True

    def _take_ticket(self) -> Ticket | None:
        ticket = getattr(self._local, "ticket", None)
        self._local.ticket = None
        return ticket

    def _account_tokens(self, info: ResponseInfo, ticket: Ticket | None, now: float) -> None:
        counted = info.prompt_tokens + info.completion_tokens
        if counted <= 0:
            self._tokens_used += int(ticket.tokens) if ticket is not None else 0
            return
        self._tokens_used += counted
        self._completion_mean = 0.8 * self._completion_mean + 0.2 * info.completion_tokens if self._n_success > 1 \
            else float(info.completion_tokens)
        if ticket is not None:
            self._tokens.refund(ticket.tokens - counted, now)  # what the estimate missed (or overshot)
            ticket.tokens = float(counted)

    def _apply_headers(self, info: ResponseInfo, ticket: Ticket, now: float) -> set[Kind]:
        """Sync both budgets to `x-ratelimit-*` (`evaluation.header_sync`); the kinds the provider announced."""
        found, rated = self._headers.apply(info.headers, ticket, self._tickets.after(ticket), now, self._token_burst)
        if "requests" in rated:  # the provider's own numbers replace spacing guesses
            self._spacing.clear()
            self._pacing = "headers"
        return found

    def _apply_notice(self, info: ResponseInfo, ticket: Ticket, now: float, *, skip: set[Kind], asked: float) -> bool:
        """Learn a limit a 429's message names (unless its kind is in `skip`: the headers told it); True if named."""
        notice = limit_from_message(info.message)
        if notice is None:
            return False
        if notice.kind in skip:
            return True
        if notice.kind == "tokens":
            if not self._tokens.known:
                self._tokens.learn(notice.rate_per_s, max(notice.rate_per_s * self.TOKEN_BURST_S, asked), now)
            if notice.remaining is not None:
                later = self._tickets.after(ticket)[1]
                self._tokens.sync(notice.remaining, ticket, later, now)
        elif not self._requests.known:
            self._spacing.keep_to(notice.rate_per_s)
            self._pacing = "known"
        return True

    def _check_stop(self) -> None:
        if self._stop is not None and self._stop.is_set():
            raise RunStopped("the run was stopped; request not sent")

    def _wait(self, seconds: float) -> None:
        """Wait (the lock released) until `seconds` pass or a budget changes; then the waiter checks again.

        An answer or a 429 may move the budgets either way (a refund, a sync, a pause), so waiters are woken
        by every change rather than holding the slot they computed; the stop event is checked at least
        every STOP_POLL_S.
        """
        if self._sleep is not None:  # an injected clock (tests): time passes only by sleeping
            self._lock.release()
            try:
                self._sleep(seconds)
            finally:
                self._lock.acquire()
        else:
            self._changed.wait(min(seconds, self.STOP_POLL_S) if self._stop is not None else seconds)

