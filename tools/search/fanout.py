"""Ask every configured provider at once and merge their results by URL (reciprocal-rank fusion).

SEARCH_FANOUT=all: each provider of SEARCH_PROVIDERS gets its own thread, so a search takes the slowest
provider's time, not the sum. A result's score is the sum over providers of 1 / (RRF_K + rank) (Cormack,
Clarke and Büttcher, SIGIR 2009; k = 60 as there); URLs are compared by `same_page` (scheme, case and
`www.` ignored, the query kept), and the title and snippet come from the best-ranked copy. A provider still running at
the budget's end is recorded as failed ("no answer within …"); the others' results are used.
"""

from __future__ import annotations

import concurrent.futures as cf
from urllib.parse import urlsplit

from tools.search.base import SearchProvider, SearchResult, normalise_url
from tools.search.failover import Attempt, SearchOutcome, ask_provider

RRF_K = 60
"""The fusion constant: a rank-1 hit from one provider weighs 1/61."""

_POOL = cf.ThreadPoolExecutor(max_workers=32, thread_name_prefix="search-fanout")


def same_page(url: str) -> str:
    """A URL's identity for merging: host and path as `normalise_url` has them, plus the query (`?v=…` matters)."""
    query = urlsplit(url.strip()).query
    return normalise_url(url) + (f"?{query}" if query else "")


def fuse(ranked: list[list[SearchResult]]) -> list[SearchResult]:
    """The results of several ranked lists, best fused score first (ties: the earlier provider's order)."""
    scores: dict[str, float] = {}
    best: dict[str, tuple[int, SearchResult]] = {}
    for hits in ranked:
        for rank, hit in enumerate(hits, start=1):
            key = same_page(hit.url)
            scores[key] = scores.get(key, 0.0) + 1.0 / (RRF_K + rank)
            if key not in best or rank < best[key][0]:
                best[key] = (rank, hit)
    order = sorted(scores, key=lambda k: -scores[k])  # sorted() is stable: first seen wins ties
    return [best[k][1] for k in order]


def search_all(query: str, providers: list[SearchProvider], max_results: int, blocked: list[str],
               budget_s: float, per_provider_s: float) -> SearchOutcome:
    """Ask every provider concurrently within `budget_s`; merge what the answering ones returned."""
    outcome = SearchOutcome()
    timeout = min(per_provider_s, budget_s)
    futures = [_POOL.submit(ask_provider, p, query, max_results, blocked, timeout) for p in providers]
    done, _ = cf.wait(futures, timeout=budget_s)
    ranked: list[list[SearchResult]] = []
    for provider, future in zip(providers, futures, strict=True):
        if future not in done:
            outcome.attempts.append(Attempt(provider.name, "failed", f"no answer within {budget_s:.0f}s"))
            continue
        attempt, kept, dropped = future.result()
        outcome.attempts.append(attempt)
        outcome.blocked += dropped
        if kept:
            ranked.append(kept)
    outcome.results = fuse(ranked)[:max_results]
    answered = [a.provider for a in outcome.attempts if a.status == "answered"]
    outcome.provider = ", ".join(answered) or None
    return outcome
