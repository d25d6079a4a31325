"""The browser tools' costs on loopback: cold start, a new context, open + click, memory, snapshot size.

Prints: the shared Chromium's cold start (Playwright driver + browser launch, through the first
browser_open); a new browser context (median); browser_open and one click on a loopback JS page
(median of `--runs`, each a fresh run); the memory (PSS, so shared pages count once) of the browser's
process tree with no run open and per open run (context + tab); and, for each test page, the
snapshot's size in tokens (the harness's estimate, characters / 3) against the page's raw DOM (outerHTML) and its
innerText. `--parallel` instead prints the pool's ratio: six runs at once, each opening a page that
takes 1 s to settle and clicking on it, against one such run alone (issue 34: at most 1.3x), the CPU
seconds each task cost (the Playwright driver and Chromium processes, and this Python process), which other
work on a shared machine does not change as it does the wall-clock ratio, and where a task's time went (its
session's phases: the new context and tab, the load, the settle waits, the snapshots, the thumbnails, the click).
`--detection` prints the loopback bot-detection page's checks as the browser sees them.
Usage: `python bench/browser.py [--runs 20] [--parallel] [--detection]`.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.js_sites import BrowserHarness, js_sites, ref_of  # noqa: E402
from tools.browser.guard import descendants  # noqa: E402
from tools.browser.tools import engine_for  # noqa: E402

PAGES = ["/search", "/filters", "/list", "/chart", "/tabs", "/feed", "/form", "/spa", "/long"]


def cpu_s() -> tuple[float, float]:
    """CPU seconds so far of this process's descendants, and of this Python process (every thread).

    The descendants are the driver and every Chromium process, with the children they reaped (such as a
    closed context's renderers).
    """
    tick, total = os.sysconf("SC_CLK_TCK"), 0
    for pid in descendants(os.getpid()):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
    return total / tick, time.process_time()


def browser_pss_mb() -> float:
    """PSS of every Chromium process under this one (the Playwright driver's browser and its helpers)."""
    total = 0
    for pid in descendants(os.getpid()):
        try:
            if "chrom" not in Path(f"/proc/{pid}/comm").read_text():
                continue
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def tokens(text: str) -> int:
    """Tokens of `text` as the harness estimates them (models.token_estimate: characters / 3)."""
    from models.token_estimate import DEFAULT_TOKENS_PER_CHAR

    return round(len(text) * DEFAULT_TOKENS_PER_CHAR)


SETTLE_PAGE = ("<!doctype html><html><head><title>slow</title></head><body><h1>Slow page</h1>"
               "<button onclick=\"document.getElementById('out').textContent = 'clicked'\">Go</button>"
               "<p id='out'>waiting</p><script>fetch('/api/wait').then((r) => r.text())"
               ".then((t) => { document.getElementById('out').textContent = t; });</script></body></html>")


def _settle_site() -> object:
    from tests.support.web_server import LocalWebServer, Reply

    def wait(_request: object) -> Reply:
        time.sleep(1.0)
        return Reply(200, "loaded", "text/plain")

    return LocalWebServer({"/settle": Reply(200, SETTLE_PAGE), "/api/wait": wait})


PHASES = ("context+tab", "goto", "settle", "snapshot", "thumbnail", "click")


class PhaseClock:
    """Seconds spent in each phase of the runs' browser sessions, summed over every run since the last `take`."""

    def __init__(self) -> None:
        self.spent: defaultdict[str, float] = defaultdict(float)
        self._lock = threading.Lock()

    def add(self, phase: str, seconds: float) -> None:
        """Count `seconds` in `phase` (from any browser thread)."""
        with self._lock:
            self.spent[phase] += seconds

    def take(self) -> defaultdict[str, float]:
        """The seconds per phase so far (a capture's snapshot is what its settle wait and thumbnail left), and reset."""
        with self._lock:
            spent, self.spent = self.spent, defaultdict(float)
        spent["snapshot"] = spent.pop("capture", 0.0) - spent["settle"] - spent["thumbnail"]
        return spent

    def watch(self) -> None:
        """Time the browser session's steps in this process (the benchmark's own; the tools are unchanged)."""
        from tools.browser import session

        for owner, name, phase in ((session.BrowserSession, "__init__", "context+tab"),
                                   (session.BrowserSession, "_goto", "goto"),
                                   (session.BrowserSession, "_wait_settled", "settle"),
                                   (session.BrowserSession, "capture", "capture"),
                                   (session.BrowserSession, "thumbnail", "thumbnail"), (session, "_click", "click")):
            setattr(owner, name, self._timed(getattr(owner, name), phase))

    def _timed(self, step: Any, phase: str) -> Any:
        @functools.wraps(step)
        def timed(*args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            try:
                return step(*args, **kwargs)
            finally:
                self.add(phase, time.perf_counter() - began)

        return timed


def parallel(runs: int) -> None:
    """Six 1 s-settle tasks (open + click) at once against one alone: the median ratio over `runs` rounds.

    Also the CPU seconds per task of the browser processes and of Python, one alone and six at once.
    """
    from concurrent.futures import ThreadPoolExecutor

    clock = PhaseClock()
    clock.watch()
    with _settle_site() as site:  # type: ignore[attr-defined]
        harness = BrowserHarness(site.host_port)

        def task() -> float:
            work = harness.workspace()
            began = time.perf_counter()
            page = harness.call(work, "browser_open", url=site.url("/settle")).output
            harness.call(work, "browser_click", ref=ref_of(page, 'button "Go"'))
            took = time.perf_counter() - began
            work.close()
            return took

        phases: dict[int, list[defaultdict[str, float]]] = {1: [], 6: []}

        def timed(count: int) -> tuple[float, float, float]:
            """Wall seconds of `count` tasks at once, and the browser's and Python's CPU seconds per task."""
            browser_before, python_before = cpu_s()
            clock.take()
            began = time.perf_counter()
            list(pool.map(lambda _i: task(), range(count)))
            wall = time.perf_counter() - began
            phases.setdefault(count, []).append(clock.take())
            time.sleep(0.5)  # the closed contexts' renderers exit and are counted
            browser_after, python_after = cpu_s()
            return wall, (browser_after - browser_before) / count, (python_after - python_before) / count

        with ThreadPoolExecutor(6) as pool:
            timed(6)  # warm: every browser thread launched
            ones, sixes = [], []
            for index in range(runs):
                ones.append(timed(1))
                sixes.append(timed(6))
                print(f"round {index + 1}: one {ones[-1][0]:.2f} s, six {sixes[-1][0]:.2f} s, ratio "
                      f"{sixes[-1][0] / ones[-1][0]:.2f}x; CPU per task: browser {ones[-1][1]:.2f} s alone, "
                      f"{sixes[-1][1]:.2f} s in six; Python {ones[-1][2]:.3f} s alone, {sixes[-1][2]:.3f} s in six")
        one, six = (statistics.median(t[0] for t in ones), statistics.median(t[0] for t in sixes))
        print(f"one 1 s-settle task (open + click): median {one:.2f} s; six at once: median {six:.2f} s; "
              f"ratio {six / one:.2f}x (issue 34: <= 1.3x; {runs} rounds)")
        print(f"CPU per task, median: browser {statistics.median(t[1] for t in ones):.2f} s alone, "
              f"{statistics.median(t[1] for t in sixes):.2f} s in six; Python "
              f"{statistics.median(t[2] for t in ones):.3f} s alone, {statistics.median(t[2] for t in sixes):.3f} s "
              f"in six ({os.cpu_count()} cores)")
        print("seconds per task in each phase, median (one alone / each of six): " + "; ".join(
            f"{phase} {statistics.median(p[phase] for p in phases[1]):.2f} / "
            f"{statistics.median(p[phase] / 6 for p in phases[6][1:]):.2f}" for phase in PHASES))
        harness.close()


def detection() -> None:
    """The detection page's checks, one line each."""
    from tests.support.detection_site import detection_site, verdicts

    with detection_site() as site:
        harness = BrowserHarness(site.host_port)
        work = harness.workspace()
        page = harness.call(work, "browser_open", url=site.url("/")).output
        found = verdicts(page)
        for line in page.splitlines():
            if line.lstrip("# ").startswith("check "):
                print(line.lstrip("# "))
        print(f"{sum(found.values())} of {len(found)} checks pass")
        work.close()
        harness.close()


def main() -> int:
    """Measure and print the numbers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--parallel", action="store_true")
    parser.add_argument("--detection", action="store_true")
    args = parser.parse_args()
    if args.parallel or args.detection:
        if args.detection:
            detection()
        if args.parallel:
            parallel(min(args.runs, 5))
        return 0
    with js_sites() as site:
        harness = BrowserHarness(site.host_port, MAX_FILE_SIZE=100000)
        engine = engine_for(harness.settings, harness.browsers)
        work = harness.workspace()
        start = time.perf_counter()
        harness.call(work, "browser_open", url=site.url("/help"))
        first = time.perf_counter() - start
        work.close()
        print(f"Chromium cold start (driver + launch): {engine.cold_start_s:.2f} s; "
              f"first browser_open in all: {first:.2f} s")

        def new_context(browser: object) -> float:
            began = time.perf_counter()
            context = browser.new_context()  # type: ignore[attr-defined]
            took = time.perf_counter() - began
            context.close()
            return took

        contexts = [engine.call(new_context, 30) for _ in range(args.runs)]
        print(f"new browser context: median {statistics.median(contexts) * 1000:.1f} ms")
        opens, clicks = [], []
        for _ in range(args.runs):
            work = harness.workspace()
            began = time.perf_counter()
            page = harness.call(work, "browser_open", url=site.url("/filters")).output
            opened = time.perf_counter()
            harness.call(work, "browser_click", ref=ref_of(page, "checkbox"))
            opens.append(opened - began)
            clicks.append(time.perf_counter() - opened)
            work.close()
        both = statistics.median(o + c for o, c in zip(opens, clicks, strict=True))
        print(f"browser_open (loopback JS page): median {statistics.median(opens) * 1000:.0f} ms; one click: median "
              f"{statistics.median(clicks) * 1000:.0f} ms; both: {both * 1000:.0f} ms "
              "(each includes the settle wait: network idle >= 0.5 s)")
        time.sleep(1.0)
        idle = browser_pss_mb()
        works = [harness.workspace() for _ in range(5)]
        for w in works:
            harness.call(w, "browser_open", url=site.url("/search"))
        time.sleep(1.0)
        loaded = browser_pss_mb()
        print(f"memory (PSS): shared browser with no run open {idle:.0f} MB; per open run (context + tab) "
              f"{(loaded - idle) / len(works):.0f} MB")
        for w in works:
            w.close()
        print("\npage        snapshot tokens   raw DOM (outerHTML) tokens   innerText tokens")
        for path in PAGES:
            work = harness.workspace()
            snapshot = harness.call(work, "browser_open", url=site.url(path)).output
            run = harness.services(work).browser_run
            html, text = run.run(lambda s: (s.page.content(), s.page.evaluate("() => document.body.innerText")))
            print(f"{path:10} {tokens(snapshot):>16} {tokens(html):>28} {tokens(text):>18}")
            work.close()
        harness.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
