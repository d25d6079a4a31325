"""DuckDuckGo (and the other engines the `ddgs` package fronts): no key needed, often rate limited."""

from __future__ import annotations

from config import Settings
from tools.search.base import ProviderError, ProviderUnavailable, SearchResult

# Web engines ddgs fronts, DuckDuckGo first. Not "auto": that puts ddgs' wikipedia and grokipedia
# (an AI-written encyclopedia) first; Wikipedia has its own provider here.
BACKENDS = "duckduckgo,brave,yahoo,startpage,mojeek"


class DuckDuckGoProvider:
    """Text search through `ddgs.DDGS`."""

    name = "duckduckgo"

    def search(self, query: str, max_results: int, timeout: float) -> list[SearchResult]:
        """Return up to `max_results` hits for `query`, giving up after `timeout` seconds."""
        from ddgs import DDGS
        from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

        try:
            hits = DDGS(timeout=max(1, int(timeout))).text(query, max_results=max_results, backend=BACKENDS)
        except RatelimitException:
            raise ProviderError("rate limited", rate_limited=True) from None
        except TimeoutException:
            raise ProviderError(f"timed out after {timeout:.0f}s") from None
        except DDGSException as exc:
            raise ProviderError(str(exc)[:150] or "search failed") from None
        return [SearchResult(title=str(h.get("title") or h["href"]), url=str(h["href"]),
                             snippet=str(h.get("body") or ""))
                for h in hits or [] if isinstance(h, dict) and h.get("href")]


def from_settings(settings: Settings) -> DuckDuckGoProvider:
    """The provider; unavailable when the ddgs package is not installed."""
    try:
        import ddgs  # noqa: F401
    except ImportError:
        raise ProviderUnavailable("the ddgs package is not installed (pip install ddgs)") from None
    return DuckDuckGoProvider()
