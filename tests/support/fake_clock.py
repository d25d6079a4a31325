"""A clock for timing logic under test: `clock()` is the time, `clock.sleep(s)` advances it at once."""

from __future__ import annotations


class FakeClock:
    """A clock whose sleep advances time (single-threaded, deterministic)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        """Advance the time by `seconds` without waiting."""
        self.now += seconds
