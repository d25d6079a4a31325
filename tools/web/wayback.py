"""wayback: a web page as the Wayback Machine archived it closest to a date, read in pages.

The availability API at WAYBACK_API_URL (an operator setting, trusted as configured) names the
snapshot (`?url=…&timestamp=YYYYMMDD`); the snapshot itself is an untrusted URL and is downloaded
like any page (tools.web.download: blocked domains, every hop's address checked) into the run's page cache.

The capture is read raw (`/web/<ts>id_/<url>`: the page as the site served it), then its links are
resolved against the archived page's own URL and wrapped as `/web/<ts>/<url>`, so following one
stays in the archive near that date. The archive's own statuses are read: an availability answer
whose `status` is an error, or a replayed error (a 4xx/5xx with `Memento-Datetime`), is an archived
error page ("try another date"), not a live failure; the header names the capture actually read
after the archive's redirects; an empty availability answer is asked once more.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from langchain_core.tools import BaseTool

from config import Settings
from tools.core.context import ToolContext
from tools.core.context_tool import context_tool
from tools.core.errors import MissingDependency, ToolFailure
from tools.core.paging import Document
from tools.core.services import RunServices
from tools.search.base import USER_AGENT, ProviderError, request_json
from tools.web.dates import day_bound
from tools.web.download import check_url, page_text
from tools.web.fetch import WebReader

RETRY_PAUSE_S = 1.0
"""Pause before asking the availability API again after an empty answer (it sometimes answers {} for archived URLs)."""
_CAPTURE = re.compile(r"^(?P<archive>https?://[^/]+)/web/(?P<stamp>\d{4,14})(?:[a-z]{2}_)?/(?P<original>.+)$")


@dataclass(frozen=True)
class Capture:
    """One Wayback capture: the archive's address, the capture's timestamp and the archived page's URL."""

    archive: str
    stamp: str
    original: str

    @classmethod
    def parse(cls, url: str) -> Capture | None:
        """The capture a '/web/<timestamp>[id_]/<url>' address names, else None."""
        match = _CAPTURE.match(url or "")
        if not match:
            return None
        original = match.group("original")
        if not re.match(r"^https?://", original, re.IGNORECASE):  # '/web/…/example.org/' (no scheme)
            original = "http://" + original.lstrip("/")
        return cls(match.group("archive"), match.group("stamp"), original)

    @property
    def raw_url(self) -> str:
        """The archived page itself, as the site served it (the `id_` form: no toolbar, links as archived)."""
        return f"{self.archive}/web/{self.stamp}id_/{self.original}"

    @property
    def replay_url(self) -> str:
        """The capture as the Wayback Machine shows it."""
        return f"{self.archive}/web/{self.stamp}/{self.original}"

    def wrap(self, url: str) -> str:
        """`url` (resolved against the original page) as the archive's capture of it near this timestamp."""
        return f"{self.archive}/web/{self.stamp}/{url}"


def raw_snapshot(url: str) -> str:
    """The snapshot URL that serves the archived page itself (the `id_` form), when it is a Wayback URL."""
    capture = Capture.parse(url)
    return capture.raw_url if capture else url


def closest_snapshot(api_url: str, url: str, stamp: str, timeout_s: float,
                     user_agent: str = USER_AGENT) -> dict[str, Any]:
    """The availability API's `closest` snapshot of `url` for the day `stamp` (YYYYMMDD); ToolFailure when none.

    An empty answer is asked once more (the API answers `archived_snapshots: {}` now and then for archived
    URLs); a closest capture whose archived `status` is an error is reported as such, not read.
    """
    closest = None
    for attempt in range(2):
        try:
            data = request_json("GET", api_url, timeout_s, user_agent=user_agent,
                                params={"url": url, "timestamp": stamp})
        except ProviderError as exc:
            raise ToolFailure(f"the Wayback Machine ({api_url}) did not answer: {exc}. Try again later.",
                              "network_error") from None
        closest = ((data or {}).get("archived_snapshots") or {}).get("closest") if isinstance(data, dict) else None
        if isinstance(closest, dict) and closest.get("url"):
            break
        if attempt == 0:
            time.sleep(RETRY_PAUSE_S)
    if not isinstance(closest, dict) or not closest.get("url") or closest.get("available") is False:
        raise ToolFailure(f"the Wayback Machine has no snapshot of {url}. Try the address in another form (with or "
                          "without www., http or https, the site's home page) or web_search for another source.",
                          "not_found")
    status = str(closest.get("status") or "")
    if status[:1] in ("4", "5"):
        raise ToolFailure(f"the capture of {url} closest to that date ({_when(str(closest.get('timestamp', '')))}) "
                          f"is an archived error page: the site answered HTTP {status} when it was archived. "
                          "Try another date (earlier or later) or the address in another form.", "not_found")
    return closest


def _when(stamp: str) -> str:
    if len(stamp) >= 14 and stamp[:14].isdigit():
        return f"{stamp[0:4]}-{stamp[4:6]}-{stamp[6:8]} {stamp[8:10]}:{stamp[10:12]}:{stamp[12:14]} UTC"
    return stamp or "unknown time"


def _read_capture(reader: WebReader, run: RunServices, snapshot: str, target: str, date: str) -> Document:
    """The capture the archive actually serves for `snapshot` (after its redirects), links kept in the archive.

    Links resolve against the archived page's own URL and are wrapped as the archive's captures, so the
    model keeps browsing the past; the header names the capture that was read.
    """
    asked = Capture.parse(snapshot)
    page = reader.get(asked.raw_url if asked else snapshot)
    read = Capture.parse(page.url) or asked
    content = page_text(page, run.workspace, base_url=read.original if read else None,
                        rewrite=read.wrap if read else None)
    shown = read.replay_url if read else page.url
    moved = "" if not asked or not read or read == asked else f" (the archive redirected from {asked.replay_url})"
    head = (f"Wayback snapshot of {target} closest to {date}: taken {_when(read.stamp if read else '')}\n"
            f"Snapshot: {shown}{moved}\n" + content.head)
    doc = Document(page.url, content.text, f'fetch_webpage(url="{page.url}", page={{page}})', reader.max_chars,
                   head=head)
    cache = run.pages
    for url in {page.url, asked.raw_url if asked else snapshot}:
        cache.put(f"url:{url}", doc)  # fetch_webpage and find_in_page on the capture's URL see the same pages
    return doc


def make_wayback_tools(settings: Settings) -> list[BaseTool]:
    """Build wayback; MissingDependency when WAYBACK_API_URL is empty."""
    if not settings.WAYBACK_API_URL:
        raise MissingDependency(["wayback"], "WAYBACK_API_URL is empty; set it to the availability API, e.g. "
                                             "https://archive.org/wayback/available.")
    reader = WebReader.from_settings(settings)
    api_url = settings.WAYBACK_API_URL

    @context_tool
    def wayback(_ctx: ToolContext, url: str, date: str, page: int = 1) -> str:
        """Read a web page as the Wayback Machine archived it, in the snapshot closest to a date.

        The reply states the snapshot's timestamp and URL, then the page's text with links, in pages
        like fetch_webpage. Use it for pages that changed or disappeared ("the site's menu in 2019").

        Args:
            url: The page's address, e.g. https://www.example.org/menu.
            date: The date wanted, as YYYY-MM-DD (or YYYY-MM, YYYY); the closest snapshot is used.
            page: Which page of the snapshot's text to read (1 is the first).
        """
        target = check_url(url, reader.blocked)  # an archived copy of a blocked page leaks the same answers
        stamp = day_bound(date, end=False, what="date").strftime("%Y%m%d")
        run = _ctx.services
        cache = run.pages

        def make() -> Document:
            closest = closest_snapshot(api_url, target, stamp, reader.timeout_s, reader.user_agent)
            return _read_capture(reader, run, str(closest["url"]), target, date.strip())

        return cache.get_or_make(f"wayback:{target}:{stamp}", make).page(page)

    return [wayback]
