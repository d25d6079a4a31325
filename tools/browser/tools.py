"""The browser tools: open, click, type, select, hover, scroll, back, snapshot and screenshot a page.

Each run gets its own browser context on first use (tools.browser.session), closed when the run's
workspace closes. Every reply but the screenshot's is the page's snapshot once it settled, paged like
fetch_webpage (`page N of M`, the next call named); find_in_page(source="browser", query=…) searches
the current page's whole snapshot. A reply also carries a small JPEG of the viewport (`thumbnail`),
which the executor puts into the trace, never into the model's context.
"""

from __future__ import annotations

import base64
import io
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, tool

from config import Settings
from tools.browser.engine import BrowserEngine, EngineConfig, chromium_missing
from tools.browser.engines import BrowserEngines
from tools.browser.proxy import ProxyRules
from tools.browser.session import BrowserSession, Capture
from tools.browser.widgets import ShotFrame
from tools.core.context import ToolContext
from tools.core.errors import MissingDependency, ToolFailure
from tools.core.paging import Document, remember_named
from tools.core.services import RunServices
from tools.media.images import SourceImage
from tools.media.vision_model import ask_vision, standalone_client
from tools.search import blocked_prefixes
from tools.web.download import check_url
from tools.web.netguard import NetPolicy

BROWSER_TOOLS = ["browser_open", "browser_click", "browser_type", "browser_select", "browser_hover",
                 "browser_scroll", "browser_back", "browser_snapshot", "browser_screenshot", "browser_press",
                 "browser_drag", "browser_click_at", "browser_hover_at", "browser_select_text", "browser_upload"]
THUMBNAIL_WIDTH = 320
T = TypeVar("T")


class BrowserReply(str):
    """A tool reply (the text the model sees) with a data-URL thumbnail of the page for the trace."""

    thumbnail: str | None = None


def thumbnail_url(image_bytes: bytes | None, width: int = THUMBNAIL_WIDTH) -> str | None:
    """A small JPEG data URL of a screenshot (for the trace), or None."""
    if not image_bytes:
        return None
    from PIL import Image

    image = Image.open(io.BytesIO(image_bytes)).convert("RGB")
    image.thumbnail((width, width * 2))
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=60)
    return "data:image/jpeg;base64," + base64.b64encode(out.getvalue()).decode("ascii")


@dataclass
class BrowserTimes:
    """Time limits inside TOOL_TIMEOUT: one whole call, one Playwright action, the settle wait."""

    call_s: float
    action_s: float
    settle_s: float

    @classmethod
    def from_settings(cls, settings: Settings) -> BrowserTimes:
        """From TOOL_TIMEOUT: a call just inside it, an action a third, settling at most 5 s."""
        total = settings.TOOL_TIMEOUT
        return cls(max(5.0, total - 1.0), max(2.0, min(10.0, total / 3)), max(1.0, min(5.0, total / 4)))


class BrowserRun:
    """One run's browser: its session (made on the browser thread at first use) and its latest snapshot."""

    def __init__(self, engine: BrowserEngine, times: BrowserTimes, max_pages: int, max_chars: int) -> None:
        self.engine = engine
        self.times = times
        self.max_pages = max_pages
        self.max_chars = max_chars
        self.session: BrowserSession | None = None
        self.last: Capture | None = None
        self.shot: ShotFrame | None = None
        """Where the last screenshot lies in the page (browser_click_at reads its points against it)."""
        self._lock = threading.Lock()  # one action of a run at a time, in the order asked

    def run(self, action: Callable[[BrowserSession], T]) -> T:
        """`action(session)` on the browser thread, the run's context made on first use."""

        def job(browser: Any) -> T:
            if self.session is None or self.session.browser is not browser:  # first use, or a restarted browser
                assert self.engine.proxy is not None
                self.session = BrowserSession(browser, action_timeout_s=self.times.action_s,
                                              settle_s=self.times.settle_s, max_pages=self.max_pages,
                                              refusal_for=self.engine.proxy.refusal_for,
                                              blocked=self.engine.config.rules.blocked)
            return action(self.session)

        with self._lock:
            return self.engine.call(job, self.times.call_s, key=self)

    def close(self) -> None:
        """Close the run's context on the browser thread (queued: the run's end does not wait for it)."""
        session, self.session = self.session, None
        if session is not None:
            self.engine.submit(lambda _browser: session.close(), key=self)

    def reply(self, capture: Capture, run: RunServices, page: int = 1, changes: bool = False) -> BrowserReply:
        """The snapshot as a paged reply; it becomes what find_in_page("browser", …) searches.

        With `changes` (hover, scroll) the lines that were not on the page before are listed first too.
        """
        appeared = _appeared(self.last, capture) if changes else []
        self.last = capture
        head = [f"URL: {capture.url}", f"Title: {capture.title}", *capture.notes, *appeared]
        doc = Document("browser", "\n".join(capture.lines) or "(the page shows no text)",
                       "browser_snapshot(page={page})", self.max_chars, head="\n".join(head))
        remember_named(run, "browser", doc)
        text = BrowserReply(doc.page(page))
        text.thumbnail = thumbnail_url(capture.thumbnail)
        return text


def _appeared(before: Capture | None, after: Capture, limit: int = 12) -> list[str]:
    """'New on the page:' lines (at most `limit`, each cut at 200 characters) when the URL stayed the same."""
    if before is None or before.url != after.url:
        return []
    seen = set(before.lines)
    new = [line.strip() for line in after.lines if line not in seen and line.strip()]
    if not new:
        return []
    shown = [f"  {line[:199] + '…' if len(line) > 200 else line}" for line in new[:limit]]
    more = [f"  …and {len(new) - limit} more new lines below"] if len(new) > limit else []
    return ["New on the page:", *shown, *more]


def _browser_run(config: RunnableConfig, engine: BrowserEngine,
                 settings: Settings) -> tuple[BrowserRun, RunServices]:
    services = ToolContext.of(config).services

    def make() -> BrowserRun:
        return BrowserRun(engine, BrowserTimes.from_settings(settings), settings.BROWSER_MAX_PAGES,
                          settings.MAX_FILE_SIZE)

    return services.browser(make), services


def engine_config(settings: Settings) -> EngineConfig:
    """The shared browser's launch and proxy rules from these settings (FETCH_ALLOWED_HOSTS, BLOCKED_DOMAINS)."""
    rules = ProxyRules(NetPolicy.parse(settings.FETCH_ALLOWED_HOSTS), tuple(blocked_prefixes(settings.BLOCKED_DOMAINS)))
    return EngineConfig.from_settings(settings, rules)


def engine_for(settings: Settings, browsers: BrowserEngines) -> BrowserEngine:
    """The application's shared browser for these settings' address rules and blocked domains."""
    return browsers.get(engine_config(settings))


def make_browser_tools(settings: Settings, browsers: BrowserEngines | None = None) -> list[BaseTool]:
    """Build the browser tools over the application's pools (`browsers`, injected by the registry's deps).

    Needs Playwright (requirements.txt) and Chromium (Debian's `chromium`), and the pools to run in.
    """
    missing = chromium_missing(settings.BROWSER_EXECUTABLE)
    if missing:
        raise MissingDependency(BROWSER_TOOLS, missing)
    if browsers is None:
        raise MissingDependency(BROWSER_TOOLS, "no browser pool was given: build the registry with "
                                               "deps=Application.tool_deps()")
    engine = engine_for(settings, browsers)
    from tools.browser.actions import make_action_tools

    return make_action_tools(settings, lambda config: _browser_run(config, engine, settings),
                             _screenshot_tool(settings, engine))


def _screenshot_tool(settings: Settings, engine: BrowserEngine) -> BaseTool:
    fallback = standalone_client(settings) if settings.llm_configured else None

    @tool
    def browser_screenshot(config: RunnableConfig, question: str = "", full_page: bool = False) -> str:  # noqa: D417
        """Take a PNG screenshot of what the browser shows now, saved in the run's workspace; optionally ask about it.

        Use it for what text cannot show: charts drawn on a canvas, maps, images, colours, layout. With a
        question, the vision model looks at the screenshot and answers it. Its pixels are the points
        browser_click_at and browser_hover_at take.

        Args:
            question: What you want to know about the page, e.g. "What value does the 2019 bar show?"
                Leave empty to only save the screenshot.
            full_page: True for the whole page top to bottom (at most 10000 pixels tall), not only the 1280×800 view.
        """
        run, services = _browser_run(config, engine, settings)
        work = services.workspace
        if run.session is None:
            raise ToolFailure("no page is open in the browser: call browser_open(url) first.", "bad_arguments")
        png, url, frame = run.run(lambda s: _shoot(s, full_page))
        run.shot = frame
        work.reserve(len(png), "the screenshot")
        path = (work.subdir("browser") / "screenshot.png").resolve()
        path.write_bytes(png)
        size = f"{frame.width}×{frame.height}"
        what = f"the whole page, {size}" if full_page else f"the {size} view"
        text = f"Screenshot of {url} ({what}) saved to {path}."
        model = ToolContext.of(config).model or fallback
        if question.strip() and (settings.vision_model is None or model is None):
            text += " No vision model is configured here, so the question was not answered."
        elif question.strip() and model is not None:
            from PIL import Image

            image = Image.open(io.BytesIO(png)).convert("RGB")
            answer = ask_vision(model, settings, question, [SourceImage(image, str(path))])
            text += f"\n\nThe vision model's answer to {question!r}:\n{answer or '(empty answer)'}"
        reply = BrowserReply(text)
        reply.thumbnail = thumbnail_url(png, 640)
        return reply

    return browser_screenshot


MAX_SHOT_HEIGHT = 10000
"""The tallest full-page screenshot, in CSS pixels (a longer page is cut there)."""

_GEOMETRY_JS = ("() => [scrollX, scrollY, innerWidth, innerHeight, "
                "Math.max(document.documentElement.scrollWidth, innerWidth), "
                "Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0)]")


def _shoot(session: BrowserSession, full_page: bool) -> tuple[bytes, str, ShotFrame]:
    """The PNG, the URL, and where the picture lies in the page (for the point tools)."""
    left, top, width, height, page_width, page_height = session.page.evaluate(_GEOMETRY_JS)
    if not full_page:
        return session.screenshot(), session.page.url, ShotFrame(left, top, int(width), int(height), False)
    tall = int(min(page_height, MAX_SHOT_HEIGHT))
    png = bytes(session.page.screenshot(type="png", full_page=True,
                                        clip={"x": 0, "y": 0, "width": int(page_width), "height": tall}))
    return png, session.page.url, ShotFrame(0, 0, int(page_width), tall, True)


def open_checked(url: str, settings: Settings) -> str:
    """The URL browser_open may load: http(s), not blocked, and pointing at a public address (checked here)."""
    from tools.web.netguard import check_target

    target = check_url(url, blocked_prefixes(settings.BLOCKED_DOMAINS))
    check_target(target, NetPolicy.parse(settings.FETCH_ALLOWED_HOSTS))
    return target


