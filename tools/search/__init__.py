"""Web search providers behind one interface, with failover in the order of SEARCH_PROVIDERS."""

from tools.search.base import (
    KeyedHTTPProvider,
    ProviderError,
    ProviderUnavailable,
    SearchProvider,
    SearchResult,
    blocked_by,
    blocked_prefixes,
    normalise_url,
)
from tools.search.failover import PROVIDERS, Attempt, SearchOutcome, configured_providers, search_with_failover

__all__ = [
    "PROVIDERS", "Attempt", "KeyedHTTPProvider", "ProviderError", "ProviderUnavailable", "SearchOutcome",
    "SearchProvider", "SearchResult", "blocked_by", "blocked_prefixes", "configured_providers", "normalise_url",
    "search_with_failover",
]
