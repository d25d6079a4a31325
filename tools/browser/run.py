"""One run's browser: its session on the engine's thread, its latest snapshot, and its replies.

A reply is the page's snapshot once it settled, paged like fetch_webpage (`page N of M`, the next call
named), with a small JPEG of the viewport as its artifact (tools.core.artifacts), which the executor puts
into the trace, never into the model's context. The action tools (tools.browser.actions, widget_tools) reach
the run through a `RunOf`, so they need not know how the tools were assembled.
"""

from __future__ import annotations

import base64
import io
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from config import Settings
from tools.browser.engine import BrowserEngine
from tools.browser.session import THUMBNAIL_WIDTH, BrowserSession, Capture
from tools.browser.widgets import ShotFrame
from tools.core.artifacts import Reply, ToolArtifact
from tools.core.context import ToolContext
from tools.core.errors import ToolFailure
from tools.core.paging import Document, remember_named
from tools.core.services import RunServices
from tools.search import blocked_prefixes
from tools.web.download import check_url
from tools.web.netguard import NetPolicy, check_target

T = TypeVar("T")


def thumbnail_url(image_bytes: bytes | None, width: int = THUMBNAIL_WIDTH) -> str | None:
    """A JPEG data URL of a screenshot at most `width` wide (for the trace); None for no bytes or no image.

    A JPEG already that small (the session's own thumbnail) is used as it is: only its header is read.
    """
    if not image_bytes:
        return None
    from PIL import Image

    try:
        with Image.open(io.BytesIO(image_bytes)) as image:
            if image.format == "JPEG" and image.width <= width and image.height <= width * 2:
                small = image_bytes
            else:
                picture = image.convert("RGB")
                picture.thumbnail((width, width * 2))
                out = io.BytesIO()
                picture.save(out, format="JPEG", quality=60)
                small = out.getvalue()
    except (OSError, ValueError, Image.DecompressionBombError):  # not an image, or a broken one
        return None
    return "data:image/jpeg;base64," + base64.b64encode(small).decode("ascii")


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

    def act(self, action: Callable[[BrowserSession], Capture], run: RunServices, changes: bool = False) -> Reply:
        """`action` on the open page (ToolFailure naming browser_open when there is none), answered by `reply`."""
        opened(self)
        return self.reply(self.run(action), run, changes=changes)

    def reply(self, capture: Capture, run: RunServices, page: int = 1, changes: bool = False) -> Reply:
        """The snapshot as a paged reply; it becomes what find_in_page("browser", …) searches.

        With `changes` (hover, scroll) the lines that were not on the page before are listed first too.
        """
        appeared = _appeared(self.last, capture) if changes else []
        self.last = capture
        head = [f"URL: {capture.url}", f"Title: {capture.title}", *capture.notes, *appeared]
        doc = Document("browser", "\n".join(capture.lines) or "(the page shows no text)",
                       "browser_snapshot(page={page})", self.max_chars, head="\n".join(head))
        remember_named(run, "browser", doc)
        return doc.page(page), ToolArtifact(thumbnail_url(capture.thumbnail))


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


RunOf = Callable[[ToolContext], "tuple[BrowserRun, RunServices]"]
"""The tools' way to the calling run's browser and services."""


def opened(run: BrowserRun) -> None:
    """ToolFailure naming browser_open when the run has no page yet."""
    if run.session is None:
        raise ToolFailure("no page is open in the browser: call browser_open(url) first.", "bad_arguments")


def open_checked(url: str, settings: Settings) -> str:
    """The URL browser_open may load: http(s), not blocked, and pointing at a public address (checked here)."""
    target = check_url(url, blocked_prefixes(settings.BLOCKED_DOMAINS))
    check_target(target, NetPolicy.parse(settings.FETCH_ALLOWED_HOSTS))
    return target


