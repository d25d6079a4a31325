"""Web search providers behind one interface: all at once (fan-out) or with failover in SEARCH_PROVIDERS order."""

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
from tools.search.fanout import fuse, search_all

__all__ = [
    "PROVIDERS", "Attempt", "KeyedHTTPProvider", "ProviderError", "ProviderUnavailable", "SearchOutcome",
    "SearchProvider", "SearchResult", "blocked_by", "blocked_prefixes", "configured_providers", "normalise_url",
    "fuse", "search_all", "search_with_failover",
]
