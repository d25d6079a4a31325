"""wayback: a web page as the Wayback Machine archived it closest to a date, read in pages.

The availability API at WAYBACK_API_URL (an operator setting, trusted as configured) names the
snapshot (`?url=…&timestamp=YYYYMMDD`); the snapshot itself is an untrusted URL and is downloaded
like any page (tools.fetch: blocked domains, every hop's address checked) into the run's page cache.
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, tool

from config import Settings
from tools.context import ToolContext
from tools.errors import MissingDependency, ToolFailure
from tools.fetch import check_url
from tools.paging import Document, run_cache
from tools.search.base import ProviderError, request_json
from tools.web.dates import day_bound
from tools.web.fetch import WebReader

# '/web/20200101123456/http://…' -> '/web/20200101123456id_/http://…': the archived page without the
# Wayback toolbar and its rewritten links, as the site served it.
_SNAPSHOT_PATH = re.compile(r"/web/(\d{14})/")


def raw_snapshot(url: str) -> str:
    """The snapshot URL that serves the archived page itself (the `id_` form), when it is a Wayback URL."""
    return _SNAPSHOT_PATH.sub(lambda m: f"/web/{m.group(1)}id_/", url, count=1)


def closest_snapshot(api_url: str, url: str, stamp: str, timeout_s: float) -> dict[str, Any]:
    """The availability API's `closest` snapshot of `url` for the day `stamp` (YYYYMMDD); ToolFailure when none."""
    try:
        data = request_json("GET", api_url, timeout_s, params={"url": url, "timestamp": stamp})
    except ProviderError as exc:
        raise ToolFailure(f"the Wayback Machine ({api_url}) did not answer: {exc}. Try again later.",
                          "network_error") from None
    closest = ((data or {}).get("archived_snapshots") or {}).get("closest") if isinstance(data, dict) else None
    if not isinstance(closest, dict) or not closest.get("url") or closest.get("available") is False:
        raise ToolFailure(f"the Wayback Machine has no snapshot of {url}. Try the address in another form (with or "
                          "without www., http or https, the site's home page) or web_search for another source.",
                          "not_found")
    return closest


def _when(stamp: str) -> str:
    if len(stamp) >= 14 and stamp[:14].isdigit():
        return f"{stamp[0:4]}-{stamp[4:6]}-{stamp[6:8]} {stamp[8:10]}:{stamp[10:12]}:{stamp[12:14]} UTC"
    return stamp or "unknown time"


def make_wayback_tools(settings: Settings) -> list[BaseTool]:
    """Build wayback; MissingDependency when WAYBACK_API_URL is empty."""
    if not settings.WAYBACK_API_URL:
        raise MissingDependency(["wayback"], "WAYBACK_API_URL is empty; set it to the availability API, e.g. "
                                             "https://archive.org/wayback/available.")
    reader = WebReader.from_settings(settings)
    api_url = settings.WAYBACK_API_URL

    @tool
    def wayback(url: str, date: str, config: RunnableConfig, page: int = 1) -> str:  # noqa: D417 - config is injected by LangGraph, not a model argument
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
        work = ToolContext.of(config).work
        cache = run_cache(work)

        def make() -> Document:
            closest = closest_snapshot(api_url, target, stamp, reader.timeout_s)
            snapshot = str(closest["url"])
            head = (f"Wayback snapshot of {target} closest to {date.strip()}: taken "
                    f"{_when(str(closest.get('timestamp', '')))}\nSnapshot: {snapshot}\n")
            # The snapshot is one cached page: fetch_webpage and find_in_page on its URL see the same pages.
            return reader.document(raw_snapshot(snapshot), work, head_prefix=head)

        return cache.get_or_make(f"wayback:{target}:{stamp}", make).page(page)

    return [wayback]
