"""SearXNG: a self-hosted metasearch instance's JSON API (`GET {SEARXNG_URL}/search?q=…&format=json`)."""

from __future__ import annotations

from config import Settings
from tools.search.base import USER_AGENT, ProviderError, ProviderUnavailable, SearchResult, plain_text, request_json


class SearxngProvider:
    """Queries one SearXNG instance; the instance must have the json format enabled."""

    name = "searxng"

    def __init__(self, base_url: str, user_agent: str = USER_AGENT) -> None:
        self.base_url = base_url.rstrip("/")
        self.user_agent = user_agent

    def search(self, query: str, max_results: int, timeout: float) -> list[SearchResult]:
        """Return up to `max_results` hits for `query`, giving up after `timeout` seconds."""
        data = request_json("GET", f"{self.base_url}/search", timeout, user_agent=self.user_agent, params={"q": query, "format": "json"})
        if not isinstance(data, dict) or not isinstance(data.get("results"), list):
            raise ProviderError("unexpected JSON shape (no 'results' list); is the json format enabled on the instance?")
        return [SearchResult(title=plain_text(str(r.get("title") or r.get("url"))), url=str(r["url"]),
                             snippet=plain_text(str(r.get("content") or "")))
                for r in data["results"][:max_results] if isinstance(r, dict) and r.get("url")]


def from_settings(settings: Settings) -> SearxngProvider:
    """The provider for SEARXNG_URL; unavailable when it is unset."""
    if not settings.SEARXNG_URL:
        raise ProviderUnavailable("no SEARXNG_URL set")
    return SearxngProvider(settings.SEARXNG_URL, settings.HTTP_USER_AGENT)
