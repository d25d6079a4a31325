"""Wikipedia: the MediaWiki search API (`action=query&list=search`) at WIKIPEDIA_API_URL."""

from __future__ import annotations

from urllib.parse import quote, urljoin

from config import Settings
from tools.search.base import (
    USER_AGENT,
    KeyedHTTPProvider,
    ProviderError,
    ProviderUnavailable,
    SearchResult,
    plain_text,
)


class WikipediaProvider(KeyedHTTPProvider):
    """Full-text search of one MediaWiki site (no key); article URLs are built as {site}/wiki/{Title}."""

    name = "wikipedia"

    def __init__(self, api_url: str, user_agent: str = USER_AGENT) -> None:
        super().__init__(api_url, user_agent=user_agent)
        self.api_url = api_url

    def search(self, query: str, max_results: int, timeout: float) -> list[SearchResult]:
        """Return up to `max_results` hits for `query`, giving up after `timeout` seconds."""
        params = {"action": "query", "list": "search", "srsearch": query, "srlimit": max_results,
                  "srprop": "snippet", "format": "json", "formatversion": 2}
        data = self.call_json("GET", "", timeout, params=params)
        if isinstance(data, dict) and "error" in data:
            error = data["error"]
            raise ProviderError(f"API error: {error.get('info', error) if isinstance(error, dict) else error}")
        hits = (data.get("query") or {}).get("search") if isinstance(data, dict) else None
        if not isinstance(hits, list):
            raise ProviderError("unexpected JSON shape (no query.search list)")
        return [SearchResult(title=str(h["title"]), url=self.article_url(str(h["title"])),
                             snippet=plain_text(str(h.get("snippet") or "")))
                for h in hits[:max_results] if isinstance(h, dict) and h.get("title")]

    def article_url(self, title: str) -> str:
        """The article's URL on the same site as the API ('/w/api.php' -> '/wiki/Title')."""
        return urljoin(self.api_url, "/wiki/" + quote(title.replace(" ", "_"), safe="()_,'-:"))


def from_settings(settings: Settings) -> WikipediaProvider:
    """The provider for WIKIPEDIA_API_URL; unavailable when it is empty."""
    if not settings.WIKIPEDIA_API_URL:
        raise ProviderUnavailable("no WIKIPEDIA_API_URL set")
    return WikipediaProvider(settings.WIKIPEDIA_API_URL, user_agent=settings.HTTP_USER_AGENT)
