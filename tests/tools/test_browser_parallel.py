"""Issue 34: runs use the browser in parallel, and a call's limit counts its action only.

Both tests assert on the order of events, never on wall time. Two runs open a page whose script's
request the server holds until the other run's request has arrived too: only runs whose actions are
in flight at the same time both see it answered inside their action. A call queued behind another
run's longer job on the one browser thread still succeeds: its limit starts when its action does.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from tests.support.chromium import BROWSER_MARKS
from tests.support.web_server import LocalWebServer, Reply

pytestmark = BROWSER_MARKS
HOLD_S = 20.0
"""How long the server holds one run's request for the other's (a bound on a failure, not a figure)."""
PAGE = ("<!doctype html><html><head><title>held</title></head><body><h1>Held page</h1><p id='out'>waiting</p>"
        "<script>fetch('/hold?run=' + location.search.slice(5)).then((r) => r.text())"
        ".then((t) => { document.getElementById('out').textContent = t; });</script></body></html>")


class Log:
    """Events in the order they happened, from any thread."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self._lock = threading.Lock()

    def add(self, event: str) -> None:
        """Note `event` now."""
        with self._lock:
            self.events.append(event)


def _held_site(log: Log) -> LocalWebServer:
    both = threading.Barrier(2)

    def hold(request: Any) -> Reply:
        run = request.query["run"][0]
        log.add(f"{run} arrived")
        try:
            both.wait(HOLD_S)
            answer = "both in flight"
        except threading.BrokenBarrierError:
            answer = "alone"
        return Reply(200, f"{answer} ({run})", "text/plain")

    return LocalWebServer({"/held": Reply(200, PAGE), "/hold": hold})


def test_two_runs_actions_overlap_on_a_slowly_settling_page():
    from tests.support.js_sites import BrowserHarness

    log = Log()
    with _held_site(log) as site, BrowserHarness(site.host_port) as harness:
        works = {run: harness.workspace(run) for run in ("a", "b")}
        replies: dict[str, str] = {}

        def open_page(run: str) -> None:
            replies[run] = str(harness.call(works[run], "browser_open", url=site.url(f"/held?run={run}")).output)
            log.add(f"{run} returned")

        threads = [threading.Thread(target=open_page, args=(run,)) for run in works]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        for work in works.values():
            work.close()
    assert "both in flight (a)" in replies["a"] and "both in flight (b)" in replies["b"]
    returned = [log.events.index(f"{run} returned") for run in works]
    assert max(log.events.index(f"{run} arrived") for run in works) < min(returned)  # each arrived before any ended


def test_a_call_waiting_for_a_busy_thread_is_not_timed_by_that_wait():
    from tests.support.js_sites import BrowserHarness
    from tools.browser.tools import engine_for

    log = Log()
    with BrowserHarness("127.0.0.1:1", BROWSER_THREADS=1) as harness:
        engine = engine_for(harness.settings, harness.browsers)
        first, second = object(), object()
        engine.call(lambda _b: None, 30, key=first)  # the one thread is up

        def long_job(_browser: Any) -> None:
            log.add("long started")
            while "short queued" not in log.events:
                time.sleep(0.01)
            time.sleep(1.5)  # past the short call's own limit, with the short call waiting all along
            log.add("long ended")

        def short_job(_browser: Any) -> str:
            log.add("short started")
            return "done"

        runner = threading.Thread(target=lambda: engine.call(long_job, 30, key=first))
        runner.start()
        while "long started" not in log.events:
            time.sleep(0.01)
        log.add("short queued")
        assert engine.call(short_job, 0.5, key=second) == "done"
        runner.join(timeout=30)
    assert log.events == ["long started", "short queued", "long ended", "short started"]

