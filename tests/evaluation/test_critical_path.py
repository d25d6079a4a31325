"""The limiter serves the request of the task that has gone furthest first (evaluation.critical_path)."""

from __future__ import annotations

import threading
import time

from evaluation.critical_path import Waiters
from evaluation.limiter import RateLimiter


def test_among_ready_requests_the_furthest_task_goes_first_and_a_blocked_one_blocks_no_one():
    waiters = Waiters()
    for _ in range(7):
        waiters.served(2)  # the task of thread 2 has made seven requests
    fresh, long_chain, other = waiters.join(1), waiters.join(2), waiters.join(3)
    assert waiters.ahead(fresh) == 1 and waiters.ahead(long_chain) == 0
    assert waiters.may_go(fresh, 1.0, 1.0)  # only ready requests compete: the long one has not looked yet
    assert not waiters.may_go(long_chain, 1.5, 1.0)  # its slot has not come
    assert waiters.may_go(fresh, 1.0, 1.0)  # ... so it blocks no one
    assert not waiters.may_go(fresh, 2.0, 2.0) and not waiters.may_go(other, 2.0, 2.0)  # its slot came: it goes first
    assert waiters.may_go(long_chain, 2.0, 2.0)
    waiters.leave(long_chain)
    assert waiters.may_go(fresh, 2.0, 2.0) and not waiters.may_go(other, 2.0, 2.0)  # ties: the earliest to ask
    waiters.leave(fresh)
    assert waiters.may_go(other, 2.0, 2.0) and len(waiters) == 1
    waiters.restart(2)  # its task ended
    assert waiters.ahead(other) == 0


def test_a_long_chain_waiting_last_is_admitted_before_one_step_tasks_after_a_pause():
    limiter = RateLimiter(0)
    admitted: dict[str, float] = {}
    ready, go = threading.Event(), threading.Event()

    def long_chain() -> None:
        limiter.take_thread_wait()  # a task starts
        for _ in range(3):
            limiter.acquire(0)  # three steps already taken
        ready.set()
        go.wait(10)
        limiter.acquire(0)
        admitted["long"] = time.monotonic()

    def one_step(name: str) -> None:
        limiter.take_thread_wait()
        limiter.acquire(0)
        admitted[name] = time.monotonic()

    chain = threading.Thread(target=long_chain)
    chain.start()
    assert ready.wait(10)
    limiter.on_rate_limited(0.8)  # a 429: everyone pauses, then requests start one Retry-After apart
    shorts = [threading.Thread(target=one_step, args=(f"short{i}",)) for i in range(2)]
    for thread in shorts:
        thread.start()
    deadline = time.monotonic() + 10
    while len(limiter._ready) < 2 and time.monotonic() < deadline:  # the one-step tasks asked first
        time.sleep(0.005)
    go.set()
    for thread in [chain, *shorts]:
        thread.join(15)
    assert len(admitted) == 3
    assert min(admitted, key=admitted.__getitem__) == "long"  # not behind the two that asked before it


def test_no_place_is_kept_for_a_short_task_about_to_end():
    waiters = Waiters()
    waiters.served(2)
    waiters.served(2)  # a one-step task's second request: its answer ends it
    fresh = waiters.join(1)
    assert waiters.ahead(fresh) == 0
    waiters.served(2)  # a third request: the task has shown it is long, its next one should not wait
    assert waiters.ahead(fresh) == 1
