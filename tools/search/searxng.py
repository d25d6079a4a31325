"""SearXNG: a self-hosted metasearch instance's JSON API (`GET {SEARXNG_URL}/search?q=…&format=json`)."""

from __future__ import annotations

from config import Settings
from tools.search.base import KeyedHTTPProvider, ProviderUnavailable, SearchResult, plain_text


class SearxngProvider(KeyedHTTPProvider):
    """Queries one SearXNG instance (no key); the instance must have the json format enabled."""

    name = "searxng"

    def search(self, query: str, max_results: int, timeout: float) -> list[SearchResult]:
        """Return up to `max_results` hits for `query`, giving up after `timeout` seconds."""
        data = self.call_json("GET", "/search", timeout, params={"q": query, "format": "json"})
        results = self.result_list(data, "results", "; is the json format enabled on the instance?")
        return [SearchResult(title=plain_text(str(r.get("title") or r.get("url"))), url=str(r["url"]),
                             snippet=plain_text(str(r.get("content") or "")))
                for r in results[:max_results] if r.get("url")]


def from_settings(settings: Settings) -> SearxngProvider:
    """The provider for SEARXNG_URL; unavailable when it is unset."""
    if not settings.SEARXNG_URL:
        raise ProviderUnavailable("no SEARXNG_URL set")
    return SearxngProvider(settings.SEARXNG_URL, user_agent=settings.HTTP_USER_AGENT)
