"""wikipedia_page and wikipedia_revisions: an article as it was on a date, and how often it was edited.

Both speak the MediaWiki Action API at WIKIPEDIA_API_URL (an operator setting, trusted as configured):
`action=query&prop=revisions` finds the latest revision at or before the end of a UTC day (rvstart,
rvdir=older) or lists revisions between two days (rvstart/rvend, followed through `continue`);
`action=parse&oldid=N` renders that revision. Redirects are followed; a missing title says so.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote, urlencode, urljoin, urlsplit

from langchain_core.tools import BaseTool, tool

from config import Settings
from tools.core.context import ToolContext
from tools.core.context_tool import context_tool
from tools.core.errors import MissingDependency, ToolFailure
from tools.core.paging import Document, PageCache
from tools.documents.textio import html_to_markdown
from tools.search.base import USER_AGENT, ProviderError, request_json
from tools.web.dates import day_bound, iso

REVISION_PROPS = "ids|timestamp|user|size|comment"
LIST_SHOWN = 40
"""Revisions listed in a wikipedia_revisions reply (all are counted)."""
MAX_LIST_REQUESTS = 40
"""Pages of 500 revisions fetched to count (20,000 revisions); a busier range is reported as 'or more'."""


@dataclass(frozen=True)
class Revision:
    """One revision of an article."""

    revid: int
    timestamp: str
    user: str
    size: int
    comment: str


@dataclass
class Revisions:
    """The revisions of one title in a range, newest first, and how the title was resolved."""

    title: str
    redirect_note: str
    items: list[Revision]
    complete: bool


class MediaWiki:
    """The few Action API calls the tools make, with the API's errors phrased for the model."""

    def __init__(self, api_url: str, timeout_s: float, user_agent: str = USER_AGENT) -> None:
        self.api_url = api_url
        self.timeout_s = timeout_s
        self.user_agent = user_agent

    def _get(self, params: dict[str, Any]) -> dict[str, Any]:
        try:
            data = request_json("GET", self.api_url, self.timeout_s, user_agent=self.user_agent,
                                params={**params, "format": "json", "formatversion": 2})
        except ProviderError as exc:
            raise ToolFailure(f"the Wikipedia API ({self.api_url}) did not answer: {exc}. Try again, or read the "
                              "article with fetch_webpage.", "network_error") from None
        if not isinstance(data, dict):
            raise ToolFailure("the Wikipedia API answered with unexpected content. Try fetch_webpage on the article.",
                              "http_error")
        if "error" in data:
            error = data["error"]
            info = error.get("info", error) if isinstance(error, dict) else error
            raise ToolFailure(f"the Wikipedia API refused the request: {info}.", "bad_arguments")
        return data

    def revisions(self, title: str, newest: str | None, oldest: str | None, limit: int | None,
                  deadline: float) -> Revisions:
        """Revisions of `title` from `newest` back to `oldest` (ISO timestamps, inclusive), newest first."""
        params: dict[str, Any] = {"action": "query", "prop": "revisions", "titles": title, "redirects": 1,
                                  "rvprop": REVISION_PROPS, "rvdir": "older", "rvlimit": limit or "max", "iwurl": 1}
        if newest:
            params["rvstart"] = newest
        if oldest:
            params["rvend"] = oldest
        items: list[Revision] = []
        resolved, note = title, ""
        proceed: dict[str, Any] = {}
        for _ in range(MAX_LIST_REQUESTS):
            data = self._get({**params, **proceed})
            query = data.get("query") or {}
            resolved, note = _resolved(title, query)
            items.extend(_revision(r) for r in (_page(title, query).get("revisions") or []))
            proceed = data.get("continue") or {}
            if not proceed or (limit is not None and len(items) >= limit) or time.monotonic() > deadline:
                break
        return Revisions(resolved, note, items[:limit] if limit else items, complete=not proceed)

    def render(self, revid: int) -> str:
        """The revision's article as HTML (action=parse by oldid)."""
        data = self._get({"action": "parse", "oldid": revid, "prop": "text", "disableeditsection": 1})
        text = (data.get("parse") or {}).get("text")
        if isinstance(text, dict):  # formatversion=1 shape
            text = text.get("*")
        if not isinstance(text, str):
            raise ToolFailure(f"the Wikipedia API returned no text for revision {revid}.", "empty_page")
        return text

    def article_url(self, title: str) -> str:
        """The article's URL on the API's site ('/w/api.php' -> '/wiki/Title')."""
        site = self.api_url.split("/w/api.php", 1)[0] if "/w/api.php" in self.api_url else urljoin(self.api_url, "/")
        return site.rstrip("/") + "/wiki/" + quote(title.replace(" ", "_"), safe="()_,'-:")

    def permalink(self, title: str, revid: int) -> str:
        """The URL of one revision ('/w/index.php?title=…&oldid=N')."""
        return urljoin(self.api_url, "index.php") + "?" + urlencode({"title": title.replace(" ", "_"), "oldid": revid})


class InterwikiTitle(ToolFailure):
    """A title with an interwiki or language prefix ('fr:Paris', 'wikt:lapwing'): a page of another wiki."""

    def __init__(self, title: str, prefix: str, url: str) -> None:
        where = f" ({url})" if url else ""
        super().__init__(f"{title!r} points to another wiki: the prefix {prefix!r} is an interwiki or language "
                         f"link{where}, not an article of this Wikipedia. Read it with fetch_webpage"
                         f"{' on that URL' if url else ''}, or pass the title without the prefix to read this wiki's "
                         "article.", "not_found")
        self.title, self.prefix, self.url = title, prefix, url

    def language_wiki(self, api_url: str) -> tuple[str, str] | None:
        """(API URL, title) of the same project in another language ('fr:Paris' on en.wikipedia.org), else None.

        Only a sister language of the configured wiki is followed: the link's host is the API's host with
        the prefix as its first label (fr.wikipedia.org for en.wikipedia.org), or the API's own host.
        """
        parts, api = urlsplit(self.url), urlsplit(api_url)
        if "/wiki/" not in parts.path or not parts.hostname or not api.hostname:
            return None
        host, mine = parts.hostname, api.hostname
        sister = host.split(".", 1)[-1] == mine.split(".", 1)[-1] and host.split(".", 1)[0] == self.prefix
        if not (sister or host == mine) or parts.scheme not in ("http", "https"):
            return None
        site = self.url.split("/wiki/", 1)[0]
        return site + "/w/api.php", unquote(parts.path.split("/wiki/", 1)[1]).replace("_", " ")


def _page(title: str, query: dict[str, Any]) -> dict[str, Any]:
    for link in query.get("interwiki") or []:  # 'fr:Paris', 'wikt:lapwing': a page of another wiki, not a missing one
        if isinstance(link, dict):
            raise InterwikiTitle(title, str(link.get("iw") or "?"), str(link.get("url") or ""))
    pages = query.get("pages") or []
    page = pages[0] if pages and isinstance(pages[0], dict) else {}
    if page.get("invalid"):
        raise ToolFailure(f"{title!r} is not a valid Wikipedia title ({page.get('invalidreason', 'invalid')}). "
                          "Pass the article's title, e.g. \"Mercedes Sosa\".", "bad_arguments")
    if page.get("missing") or not page:
        raise ToolFailure(f"Wikipedia has no article titled {title!r}. Check the spelling, or find the exact title "
                          "with web_search.", "not_found")
    return page


def _resolved(title: str, query: dict[str, Any]) -> tuple[str, str]:
    """The final title after normalisation and redirects, and a note when a redirect was followed."""
    current = title
    for entry in query.get("normalized") or []:
        if entry.get("from") == current:
            current = entry.get("to", current)
    note = ""
    for entry in query.get("redirects") or []:
        if entry.get("from") == current:
            note = f"({current!r} redirects to {entry.get('to')!r})"
            current = entry.get("to", current)
    pages = query.get("pages") or []
    if pages and isinstance(pages[0], dict) and pages[0].get("title"):
        current = pages[0]["title"]
    return current, note


def _revision(raw: dict[str, Any]) -> Revision:
    return Revision(int(raw.get("revid") or 0), str(raw.get("timestamp") or ""), str(raw.get("user") or "(hidden)"),
                    int(raw.get("size") or 0), " ".join(str(raw.get("comment") or "").split()))


def _line(rev: Revision) -> str:
    comment = rev.comment if len(rev.comment) <= 120 else rev.comment[:117] + "…"
    return f"{rev.timestamp}  rev {rev.revid}  {rev.user}  {rev.size:,} bytes" + (f"  — {comment}" if comment else "")


def make_wikipedia_tools(settings: Settings) -> list[BaseTool]:
    """Build wikipedia_page and wikipedia_revisions; MissingDependency when WIKIPEDIA_API_URL is empty."""
    if not settings.WIKIPEDIA_API_URL:
        raise MissingDependency(["wikipedia_page", "wikipedia_revisions"],
                                "WIKIPEDIA_API_URL is empty; set it to a MediaWiki API, "
                                "e.g. https://en.wikipedia.org/w/api.php.")
    timeout_s = max(2.0, settings.TOOL_TIMEOUT - 1.0)

    @context_tool
    def wikipedia_page(_ctx: ToolContext, title: str, as_of: str = "", page: int = 1) -> str:
        """Read a Wikipedia article as it was on a date (its latest revision at or before the end of that UTC day).

        The reply names the revision id and its timestamp, then the article's text with links, in
        pages like fetch_webpage ("page N of M" and the call for the next). Use as_of for questions
        about an earlier state ("as of 2022", "at the end of June 2023"); leave it empty for today's.

        Args:
            title: The article's title, e.g. "Mercedes Sosa" (redirects are followed).
            as_of: The date, as YYYY-MM-DD (or YYYY-MM, or YYYY for the end of that year); empty for the
                current article.
            page: Which page of the article's text to read (1 is the first).
        """
        name = (title or "").strip()
        if not name:
            raise ToolFailure("no title given. Pass the article's title, e.g. \"Mercedes Sosa\".", "bad_arguments")
        moment = iso(day_bound(as_of, end=True, what="as_of")) if (as_of or "").strip() else None
        cache = _ctx.services.pages

        def make() -> Document:
            return _read_revision(settings, name, moment, as_of, cache)

        return cache.get_or_make(f"wiki:{settings.WIKIPEDIA_API_URL}:{name}:{moment}", make).page(page)

    @tool
    def wikipedia_revisions(title: str, start: str = "", end: str = "") -> str:
        """Count and list the edits (revisions) of a Wikipedia article between two dates, inclusive.

        The first line is "N revisions"; then the revisions newest first (timestamp, revision id,
        user, size in bytes, edit comment), the first ones only when there are many. Use it for "how
        many times was X edited" and to find which revision to read with wikipedia_page.

        Args:
            title: The article's title, e.g. "Mercedes Sosa" (redirects are followed).
            start: The first day counted, as YYYY-MM-DD (or YYYY-MM, YYYY); empty for the article's creation.
            end: The last day counted (its whole UTC day is included); empty for today.
        """
        name = (title or "").strip()
        if not name:
            raise ToolFailure("no title given. Pass the article's title, e.g. \"Mercedes Sosa\".", "bad_arguments")
        oldest = iso(day_bound(start, end=False, what="start")) if (start or "").strip() else None
        newest = iso(day_bound(end, end=True, what="end")) if (end or "").strip() else None
        if oldest and newest and oldest > newest:
            raise ToolFailure(f"start ({start}) is after end ({end}). Swap them.", "bad_arguments")
        wiki = MediaWiki(settings.WIKIPEDIA_API_URL, timeout_s, settings.HTTP_USER_AGENT)
        found = wiki.revisions(name, newest, oldest, None, time.monotonic() + timeout_s - 1.0)
        return _revisions_reply(found, oldest, newest)

    return [wikipedia_page, wikipedia_revisions]


def _read_revision(settings: Settings, name: str, moment: str | None, as_of: str, cache: PageCache) -> Document:
    """The article's revision at `moment` (latest when None) as a paged Document, found again by its permalink."""
    timeout_s = max(2.0, settings.TOOL_TIMEOUT - 1.0)
    wiki = MediaWiki(settings.WIKIPEDIA_API_URL, timeout_s, settings.HTTP_USER_AGENT)
    try:
        found = wiki.revisions(name, moment, None, 1, time.monotonic() + timeout_s)
    except InterwikiTitle as jump:
        there = jump.language_wiki(wiki.api_url)
        if there is None:
            raise
        wiki = MediaWiki(there[0], timeout_s, settings.HTTP_USER_AGENT)  # the same project in that language
        found = wiki.revisions(there[1], moment, None, 1, time.monotonic() + timeout_s)
        found.redirect_note = f"(the language link {name!r}, read on {there[0]})"
    if not found.items:
        raise ToolFailure(f"{found.title!r} has no revision at or before {moment}: the article did not exist "
                          "yet. Try a later date.", "not_found")
    rev = found.items[0]
    link = wiki.permalink(found.title, rev.revid)
    text = html_to_markdown(wiki.render(rev.revid), url=wiki.article_url(found.title), main_content_only=False,
                            links=True)
    when = f"as of {as_of.strip()} (latest revision at or before {moment})" if moment else "current revision"
    head = "\n".join(filter(None, [f"Wikipedia: {found.title} — {when} {found.redirect_note}".rstrip(),
                                   f"Revision {rev.revid} of {rev.timestamp} by {rev.user}",
                                   f"Permalink: {link}"]))
    doc = Document(link, text, f'wikipedia_page(title="{name}", as_of="{(as_of or "").strip()}", page={{page}})',
                   settings.MAX_FILE_SIZE, head=head)
    cache.put(f"url:{link}", doc)  # find_in_page(source=permalink) searches this revision
    return doc


def _revisions_reply(found: Revisions, oldest: str | None, newest: str | None) -> str:
    """'N revisions', the span, then the newest LIST_SHOWN of them, one line each."""
    count = len(found.items)
    span = f"from {oldest or 'the first revision'} to {newest or 'now'}"
    first = f"{count} revision{'s' if count != 1 else ''}" + ("" if found.complete else
                                                               " or more (counting stopped at the time limit)")
    lines = [first, f"of the Wikipedia article {found.title!r} {span}, inclusive {found.redirect_note}".rstrip()]
    lines += [_line(r) for r in found.items[:LIST_SHOWN]]
    if count > LIST_SHOWN:
        lines.append(f"…[{count - LIST_SHOWN} older revisions not listed, "
                     f"the oldest of {found.items[-1].timestamp}; narrow start/end to list them]")
    return "\n".join(lines)
