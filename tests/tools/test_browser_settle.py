"""The settle wait after an action: network idle for 0.5 s and the DOM quiet for 300 ms, in a few waits.

A fake tab on a fake clock: its `wait_for_timeout` moves the clock on (and ends the held request when its
time comes), so each case is exact and instant.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from tools.browser import session as session_module
from tools.browser.session import BrowserSession, Settle


class FakeTab:
    """A tab whose one request ends at `request_ends` and whose DOM last changes at `dom_changes`."""

    def __init__(self, clock: list[float], settle: Settle, request_ends: float, dom_changes: float) -> None:
        self.clock, self.settle = clock, settle
        self.request_ends, self.dom_changes = request_ends, dom_changes
        self.waits: list[float] = []

    def wait_for_timeout(self, ms: float) -> None:
        self.waits.append(ms)
        before, self.clock[0] = self.clock[0], self.clock[0] + ms / 1000
        if before < self.request_ends <= self.clock[0]:
            self.settle.inflight, self.settle.last = 0, self.request_ends

    def evaluate(self, _script: str) -> float:
        return (self.clock[0] - self.dom_changes) * 1000


def _session(monkeypatch: pytest.MonkeyPatch, request_ends: float, dom_changes: float,
             settle_s: float = 5.0) -> tuple[BrowserSession, FakeTab, list[float]]:
    clock = [0.0]
    monkeypatch.setattr(session_module, "time", SimpleNamespace(monotonic=lambda: clock[0]))  # this module's clock
    session: Any = BrowserSession.__new__(BrowserSession)
    session._settle = Settle(inflight=1, last=0.0)
    session._popups, session.notes, session.settle_s = [], [], settle_s
    session.page = FakeTab(clock, session._settle, request_ends, dom_changes)
    return session, session.page, clock


def test_a_tab_settles_half_a_second_after_its_last_request_in_a_few_waits(monkeypatch):
    session, tab, clock = _session(monkeypatch, request_ends=1.0, dom_changes=1.0)
    assert session._wait_settled(0.0)
    assert 1.5 <= clock[0] < 1.52  # not up to 100 ms late, as a fixed poll was
    assert len(tab.waits) <= 6  # a fixed 100 ms poll made 15


def test_a_tab_whose_dom_still_changes_waits_until_it_was_quiet_for_300_ms(monkeypatch):
    session, _tab, clock = _session(monkeypatch, request_ends=1.0, dom_changes=1.4)
    assert session._wait_settled(0.0)
    assert 1.7 <= clock[0] < 1.72


def test_a_tab_still_loading_when_the_settle_time_ends_is_not_settled(monkeypatch):
    session, _tab, clock = _session(monkeypatch, request_ends=3.0, dom_changes=0.0, settle_s=1.0)
    assert not session._wait_settled(0.0)
    assert clock[0] == pytest.approx(1.0)
