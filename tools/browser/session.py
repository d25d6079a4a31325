"""One run's browser: its own context (cookies, storage) and its one tab, operated on the browser thread.

Every method here runs on the engine's thread (`BrowserEngine.call`), never on a tool thread. The run's
ref counter lives here, so a ref number is never given twice in a run. After each action the page is
given time to settle — network idle for 0.5 s and the DOM quiet for 300 ms, capped at `settle_s` — and then the
whole page is walked into a snapshot. Popups and `target=_blank` links open in the run's one tab; a
JavaScript dialog is accepted and its text noted; a download is not saved by the browser (the reply
names its URL for fetch_webpage, which saves files under the workspace's caps). The trace's thumbnail
of each action is rendered small by Chromium itself, through the tab's DevTools (CDP) session.
"""

from __future__ import annotations

import base64
import contextlib
import re
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urldefrag

from tools.browser.snapshot_js import INIT_SCRIPT, SCROLL_JS, WALKER
from tools.core.errors import ToolFailure
from tools.search import blocked_by

VIEWPORT = {"width": 1280, "height": 800}
_REF = re.compile(r"^\[?e?(\d+)\]?$", re.IGNORECASE)
MAX_OPTIONS = 30
FRAME_WAIT_MS = 3000
"""How long a frame's document is waited for in a snapshot (a frame that never gets one is left out)."""
MAX_NODES = 30000
"""Elements one snapshot walks at most (a huge page's snapshot says where it stopped)."""
THUMBNAIL_WIDTH = 320
"""The width, in pixels, of an action's thumbnail in the trace."""
THUMBNAIL_QUALITY = 60
SHOT_TIMEOUT_S = 3.0
"""How long a thumbnail may take (a renderer kept busy by a script gets no thumbnail)."""
NETWORK_IDLE_S = 0.5
"""A settled tab has had no request in flight for this long..."""
DOM_QUIET_MS = 300
"""...and no DOM change for this long."""
BUSY_POLL_S = 0.25
"""How often a wait with a request in flight looks again: its end is seen well before NETWORK_IDLE_S of idle."""


@dataclass
class Settle:
    """In-flight requests of the tab, and when the network last changed."""

    inflight: int = 0
    last: float = field(default_factory=time.monotonic)

    def start(self, _request: Any) -> None:
        """A request began."""
        self.inflight += 1
        self.last = time.monotonic()

    def end(self, _request: Any) -> None:
        """A request finished or failed."""
        self.inflight = max(0, self.inflight - 1)
        self.last = time.monotonic()


@dataclass
class Capture:
    """What one action left: the page's snapshot lines, notes (dialogs, refusals) and a small screenshot."""

    url: str
    title: str
    lines: list[str]
    notes: list[str]
    thumbnail: bytes | None = None


class BrowserSession:
    """A run's context and tab; every method runs on the browser thread."""

    def __init__(self, browser: Any, *, action_timeout_s: float, settle_s: float, max_pages: int,
                 refusal_for: Any, blocked: tuple[str, ...] = ()) -> None:
        self.browser = browser
        self.context = browser.new_context(viewport=VIEWPORT, accept_downloads=True, service_workers="block",
                                           locale="en-US")
        self.context.set_default_timeout(action_timeout_s * 1000)
        self.context.set_default_navigation_timeout(action_timeout_s * 1000)
        self.context.add_init_script(INIT_SCRIPT)
        self.blocked = blocked
        for prefix in blocked:  # https paths are not visible to the proxy: refused here, before any request
            self.context.route(re.compile(r"^[a-z]+://(www\.)?" + re.escape(prefix), re.IGNORECASE), self._refuse)
        self.settle_s = settle_s
        self.max_pages = max_pages
        self.pages_loaded = 0
        self.next_ref = 1
        self.notes: list[str] = []
        self._refusal_for = refusal_for
        self._settle = Settle()
        self._popups: list[str] = []
        self._devtools: Any = None
        self._devtools_usable = True
        self.page = self.context.new_page()
        self._watch(self.page)
        self.page.on("close", self._drop_devtools)
        self.context.on("page", self._popup)

    def _watch(self, page: Any) -> None:
        page.on("request", self._settle.start)
        page.on("requestfinished", self._settle.end)
        page.on("requestfailed", self._failed)
        page.on("dialog", self._dialog)
        page.on("download", self._download)
        page.on("crash", self._crashed)

    def _crashed(self, _page: Any) -> None:
        crashed = getattr(self.browser, "crashed", None)  # a RunBrowser: the run gets a new context next call
        if crashed is not None:
            crashed()

    def _failed(self, request: Any) -> None:
        self._settle.end(request)
        if request.is_navigation_request() and request.frame == self.page.main_frame:
            why = self._refusal_for(request.url) or request.failure or "failed"
            self.notes.append(f"The navigation to {request.url} did not load: {why}")

    def _refuse(self, route: Any) -> None:
        if route.request.is_navigation_request():
            self.notes.append(f"{route.request.url} is on a blocked domain (it mirrors benchmark answers) and was "
                              "not loaded. Find the information in an original source.")
        route.abort("blockedbyclient")

    def _dialog(self, dialog: Any) -> None:
        self.notes.append(f"A JavaScript {dialog.type} said: \"{dialog.message}\" (accepted).")
        dialog.accept()

    def _download(self, download: Any) -> None:
        self.notes.append(f"The page started a download of {download.suggested_filename!r} from {download.url}; the "
                          f"browser does not save files: read it with fetch_webpage(url=\"{download.url}\").")
        download.cancel()

    def _popup(self, page: Any) -> None:
        if page == self.page:
            return
        with contextlib.suppress(Exception):  # a popup that never commits still gets closed
            page.wait_for_load_state("commit", timeout=3000)
        url = page.url
        page.close()
        if url and url != "about:blank":
            self._popups.append(url)  # opened in the run's tab once the action's own wait gets to it

    def _goto(self, url: str) -> None:
        self._count_page()
        try:
            self.page.goto(url, wait_until="domcontentloaded")
        except Exception as exc:  # noqa: BLE001 - the reason is in the observation
            why = self._refusal_for(url) or str(exc).splitlines()[0]
            self.notes.append(f"The navigation to {url} did not load: {why}")

    def _count_page(self) -> None:
        self.pages_loaded += 1
        if self.pages_loaded > self.max_pages:
            raise ToolFailure(f"this run opened {self.max_pages} pages in the browser (BROWSER_MAX_PAGES); answer "
                              "with what you found or use fetch_webpage.", "size_limit")

    # --- actions -----------------------------------------------------------------------------------

    def open(self, url: str) -> Capture:
        """Load `url` in the run's tab (replacing the page) and capture it once settled."""
        start = time.monotonic()
        self._goto(url)
        return self.capture(start)

    def locate(self, ref: str) -> Any:
        """The element carrying `ref` in any frame of the tab; ToolFailure naming browser_snapshot if none."""
        match = _REF.match((ref or "").strip())
        if not match:
            raise ToolFailure(f"{ref!r} is not a ref: pass one such as \"e12\" from the latest snapshot.",
                              "bad_arguments")
        name = f"e{int(match.group(1))}"
        for frame in self.page.frames:
            found = frame.locator(f'[data-gaia-ref="{name}"]')
            if found.count():
                return found.first
        age = "is from an earlier page or the element is gone" if int(match.group(1)) < self.next_ref \
            else "was never given"
        raise ToolFailure(f"ref {name} {age}: call browser_snapshot to see the current page's refs.", "not_found")

    def act(self, ref: str, action: str, text: str = "", submit: bool = False) -> Capture:
        """Click, type into, select in or hover over the element `ref`, then capture the page."""
        element = self.locate(ref)
        start = time.monotonic()
        before = urldefrag(self.page.url)[0]
        if action == "click":
            _click(element)
        elif action == "type":
            try:
                element.fill(text)
            except Exception as exc:  # noqa: BLE001 - not a field
                raise ToolFailure(f"{ref} cannot be typed into ({str(exc).splitlines()[0]}); pick a textbox or "
                                  "searchbox ref.", "bad_arguments") from None
            if submit:
                element.press("Enter")
        elif action == "select":
            self._select(element, ref, text)
        elif action == "hover":
            element.hover()
        capture = self.capture(start)
        if urldefrag(capture.url)[0] != before:
            self._count_page()
        return capture

    def _select(self, element: Any, ref: str, option: str) -> None:
        if element.evaluate("(e) => e.tagName") != "SELECT":
            _click(element)
            self.page.get_by_role("option", name=option).first.click()
            return
        for how in ("label", "value"):
            try:
                element.select_option(**{how: option}, timeout=2000)
                return
            except Exception:  # noqa: BLE001 - try the value next
                continue
        labels = element.evaluate("(e) => Array.from(e.options).map((o) => o.label || o.text)")
        raise ToolFailure(f"{ref} has no option {option!r}; its options are: {' | '.join(labels[:MAX_OPTIONS])}.",
                          "bad_arguments")

    def scroll(self, direction: str) -> Capture:
        """Scroll the page (or its main inner scrolling element) and capture what is there now."""
        start = time.monotonic()
        where = self.page.evaluate(SCROLL_JS, direction)
        inner = " (an inner scrolling area)" if where.get("inner") else ""
        self.notes.append(f"Scrolled {direction}{inner}: now at {where['top']} of {where['height']} pixels.")
        return self.capture(start)

    def back(self) -> Capture:
        """History back; says so when there is no earlier page."""
        start = time.monotonic()
        before = self.page.url
        self.page.go_back(wait_until="domcontentloaded")  # None also for a same-document (pushState) step
        if self.page.url == "about:blank" and before != "about:blank":  # the tab's blank start is no page
            self.page.go_forward(wait_until="domcontentloaded")
        if self.page.url == before:
            self.notes.append("There is no earlier page in this tab's history.")
        return self.capture(start)

    def screenshot(self) -> bytes:
        """A PNG of the viewport."""
        return bytes(self.page.screenshot(type="png"))

    def capture(self, since: float | None = None, thumbnail: bool = True) -> Capture:
        """The page once settled: URL, title, snapshot lines (refs assigned), notes, a JPEG thumbnail."""
        if not self._wait_settled(time.monotonic() if since is None else since):
            self.notes.append(f"The page was still loading after {self.settle_s:g} s: what it shows may be "
                              "incomplete; call browser_snapshot to look again.")
        if self.page.url.startswith("chrome-error://"):  # a refused or failed navigation: back where it was
            with contextlib.suppress(Exception):
                self.page.go_back(wait_until="domcontentloaded")
            self.notes.append(f"The browser stays on {self.page.url}.")
        lines: list[str] = []
        for index, frame in enumerate(self.page.frames):
            if index and not _walkable(frame.url):  # file:, chrome:, view-source: ... never load: no document
                lines.append(f"--- frame {frame.url.split(':', 1)[0]}: (not loaded: only http and https pages) ---")
                continue
            try:  # through a locator: its timeout bounds a frame that never gets a document
                walked = frame.locator(":root").evaluate(f"(_root, arg) => ({WALKER})(arg)",
                                                         {"start": self.next_ref, "maxOptions": MAX_OPTIONS,
                                                          "maxNodes": MAX_NODES}, timeout=FRAME_WAIT_MS)
            except Exception:  # noqa: BLE001 - a frame that navigated away or is cross-process-gone
                continue
            self.next_ref = max(self.next_ref, int(walked["next"]))
            if index and walked["lines"]:
                lines.append(f"--- frame {frame.url} ---")
            lines.extend(walked["lines"])
        if blocked_by(self.page.url, list(self.blocked)):  # reached through a redirect hop the route never saw
            self.notes.append(f"{self.page.url} is on a blocked domain and is not shown.")
            self.page.goto("about:blank")
            lines = []
        notes, self.notes = self.notes, []
        shot = self.thumbnail() if thumbnail else None
        return Capture(self.page.url, _title(self.page), lines, notes, shot)

    def thumbnail(self) -> bytes | None:
        """A JPEG of the viewport, THUMBNAIL_WIDTH wide, or None: a thumbnail is a nicety for the trace.

        Chromium renders it at that size through the tab's CDP session: a third of the browser's CPU of
        a full-size screenshot, and nothing for Python to decode and shrink. Without CDP (not Chromium, or
        a command it refused) Playwright's full-size screenshot is taken instead, and shrunk by the reply.
        """
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            devtools = self._tab_devtools()
            if devtools is not None:
                return _small_shot(devtools)
        except PlaywrightTimeout:
            return None  # a busy renderer: Playwright's screenshot would wait as long again
        except Exception:  # noqa: BLE001 - this session keeps to Playwright's screenshot from now on
            self._drop_devtools()
            self._devtools_usable = False
        try:
            return bytes(self.page.screenshot(type="jpeg", quality=45, timeout=SHOT_TIMEOUT_S * 1000))
        except Exception:  # noqa: BLE001 - no thumbnail this time
            return None

    def _tab_devtools(self) -> Any:
        """The tab's CDP session: made at first use, kept until the tab closes; None where there is none."""
        if self._devtools is None and self._devtools_usable:
            try:
                self._devtools = self.context.new_cdp_session(self.page)
            except Exception:  # noqa: BLE001 - not Chromium
                self._devtools_usable = False
        return self._devtools

    def _drop_devtools(self, _page: Any = None) -> None:
        self._devtools = None

    def _wait_settled(self, since: float) -> bool:
        """Wait for network idle and a quiet DOM; False if `settle_s` ended first.

        Each wait lasts until the tab could first be settled (0.5 s after its last request ended, 300 ms after
        its last DOM change), so a settle costs a few round trips to the driver rather than one every 100 ms.
        """
        end = since + self.settle_s
        pause = 0.0
        while (left := end - time.monotonic()) > 0:
            if pause:
                self.page.wait_for_timeout(min(pause, left) * 1000)
            if self._popups:
                url = self._popups.pop(0)
                self.notes.append(f"A new window for {url} was opened in this tab instead.")
                self._goto(url)
                end, pause = time.monotonic() + self.settle_s, 0.0
                continue
            pause = self._unsettled_for(since)
            if not pause:
                return True
        return False

    def _unsettled_for(self, since: float) -> float:
        """0 when the tab has settled, else the seconds until it could have (a request's end is an event: polled)."""
        if self._settle.inflight:
            return BUSY_POLL_S
        idle = time.monotonic() - max(since, self._settle.last)
        if idle < NETWORK_IDLE_S:
            return NETWORK_IDLE_S - idle
        try:
            quiet = self.page.evaluate("() => Date.now() - (window.__gaiaLastChange || 0)")
        except Exception:  # noqa: BLE001 - the page is navigating: keep waiting
            return BUSY_POLL_S
        return 0.0 if quiet >= DOM_QUIET_MS else (DOM_QUIET_MS - quiet) / 1000

    def close(self) -> None:
        """Close the run's context: its tab, cookies and storage go with it."""
        with contextlib.suppress(Exception):  # the browser may already be gone
            self.context.close()


def _small_shot(devtools: Any) -> bytes:
    """The visible part of the page (where it is scrolled to, as big as the viewport really is), rendered small."""
    deadline = time.monotonic() + SHOT_TIMEOUT_S
    view = devtools.send("Page.getLayoutMetrics", timeout=SHOT_TIMEOUT_S * 1000)["cssVisualViewport"]
    width = max(1.0, float(view["clientWidth"]))
    clip = {"x": view["pageX"], "y": view["pageY"], "width": width, "height": view["clientHeight"],
            "scale": min(1.0, THUMBNAIL_WIDTH / width)}  # the clip is in page coordinates, not the viewport's
    left_ms = max(100.0, (deadline - time.monotonic()) * 1000)
    shot = devtools.send("Page.captureScreenshot", {"format": "jpeg", "quality": THUMBNAIL_QUALITY, "clip": clip},
                         timeout=left_ms)
    return base64.b64decode(shot["data"])


def _click(element: Any) -> None:
    try:
        element.click(timeout=5000)
    except Exception:  # noqa: BLE001 - covered or moving: click it where it is
        element.dispatch_event("click")


def _walkable(url: str) -> bool:
    """Whether a frame at `url` has a document a snapshot may walk (web pages and their blank/srcdoc frames)."""
    return url.split(":", 1)[0].lower() in ("http", "https", "about", "data", "blob")


def _title(page: Any) -> str:
    try:
        return str(page.title())
    except Exception:  # noqa: BLE001 - navigating
        return ""
