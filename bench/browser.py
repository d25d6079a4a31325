"""The browser tools' costs on loopback: cold start, a new context, open + click, memory, snapshot size.

Prints: the shared Chromium's cold start (Playwright driver + browser launch, through the first
browser_open); a new browser context (median); browser_open and one click on a loopback JS page
(median of `--runs`, each a fresh run); the memory (PSS, so shared pages count once) of the browser's
process tree with no run open and per open run (context + tab); and, for each test page, the
snapshot's size in tokens (the harness's estimate, characters / 3) against the page's raw DOM (outerHTML) and its
innerText. Usage: `python bench/browser.py [--runs 20]`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.js_sites import BrowserHarness, js_sites, ref_of  # noqa: E402
from tools.browser.tools import engine_for  # noqa: E402

PAGES = ["/search", "/filters", "/list", "/chart", "/tabs", "/feed", "/form", "/spa", "/long"]


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def browser_pss_mb() -> float:
    """PSS of every Chromium process under this one (the Playwright driver's browser and its helpers)."""
    tree, total, stack = _children(), 0, list(_children().get(os.getpid(), []))
    while stack:
        pid = stack.pop()
        stack.extend(tree.get(pid, []))
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


def main() -> int:
    """Measure and print the numbers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    with js_sites() as site:
        harness = BrowserHarness(site.host_port, MAX_FILE_SIZE=100000)
        engine = engine_for(harness.settings)
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
            run = work.shared("browser", lambda: None)
            html, text = run.run(lambda s: (s.page.content(), s.page.evaluate("() => document.body.innerText")))
            print(f"{path:10} {tokens(snapshot):>16} {tokens(html):>28} {tokens(text):>18}")
            work.close()
        harness.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
