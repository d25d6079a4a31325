"""Tavily: a search API for agents (`POST /search` with a bearer key; TAVILY_API_KEY)."""

from __future__ import annotations

from config import Settings
from tools.search.base import USER_AGENT, KeyedHTTPProvider, ProviderUnavailable, SearchResult

TAVILY_API = "https://api.tavily.com"


class TavilyProvider(KeyedHTTPProvider):
    """Queries Tavily's search endpoint (`api_base` is overridable for a local test server)."""

    name = "tavily"

    def __init__(self, api_key: str, api_base: str = TAVILY_API, user_agent: str = USER_AGENT) -> None:
        super().__init__(api_base, api_key, user_agent)

    def search(self, query: str, max_results: int, timeout: float) -> list[SearchResult]:
        """Return up to `max_results` hits for `query`, giving up after `timeout` seconds."""
        body = {"query": query, "max_results": max_results, "search_depth": "basic"}
        results = self.result_list(self.call_json("POST", "/search", timeout, json=body), "results")
        return [SearchResult(title=str(r.get("title") or r["url"]), url=str(r["url"]),
                             snippet=str(r.get("content") or ""))
                for r in results[:max_results] if r.get("url")]


def from_settings(settings: Settings) -> TavilyProvider:
    """The provider for TAVILY_API_KEY; unavailable without a key."""
    key = settings.TAVILY_API_KEY.get_secret_value() if settings.TAVILY_API_KEY else ""
    if not key:
        raise ProviderUnavailable("no TAVILY_API_KEY set")
    return TavilyProvider(key, user_agent=settings.HTTP_USER_AGENT)
