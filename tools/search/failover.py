"""Try the configured providers in order until one returns usable (non-blocked) results.

A provider without its key/URL is skipped without a call; an error, a 429 or an empty answer moves
on to the next. Every attempt is recorded so the tool can say which provider answered and why the
others did not. Providers are listed in `PROVIDERS` by import, as tools are in the registry: adding one
is its module (a `from_settings(settings)`), its setting and one line here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from config import Settings
from tools.search import duckduckgo, searxng, tavily, wikipedia
from tools.search.base import ProviderError, ProviderUnavailable, SearchProvider, SearchResult, blocked_by

PROVIDERS: dict[str, Callable[[Settings], SearchProvider]] = {
    "duckduckgo": duckduckgo.from_settings,
    "tavily": tavily.from_settings,
    "searxng": searxng.from_settings,
    "wikipedia": wikipedia.from_settings,
}
"""Provider name (as written in SEARCH_PROVIDERS) -> builder; ProviderUnavailable when not configured."""


@dataclass
class Attempt:
    """What happened with one provider: 'answered', 'skipped', 'failed', 'rate_limited' or 'empty'."""

    provider: str
    status: str
    detail: str = ""


@dataclass
class SearchOutcome:
    """The results (empty when every provider failed) and the attempts that led to them."""

    results: list[SearchResult] = field(default_factory=list)
    provider: str | None = None
    attempts: list[Attempt] = field(default_factory=list)
    blocked: int = 0


def configured_providers(settings: Settings) -> tuple[list[SearchProvider], list[Attempt]]:
    """Providers of SEARCH_PROVIDERS in order, and 'skipped' attempts for unknown or unconfigured ones."""
    providers: list[SearchProvider] = []
    skipped: list[Attempt] = []
    for name in (n.strip().lower() for n in settings.SEARCH_PROVIDERS.split(",")):
        if not name:
            continue
        builder = PROVIDERS.get(name)
        if builder is None:
            skipped.append(Attempt(name, "skipped", f"unknown provider (known: {', '.join(PROVIDERS)})"))
            continue
        try:
            providers.append(builder(settings))
        except ProviderUnavailable as exc:
            skipped.append(Attempt(name, "skipped", str(exc)))
    return providers, skipped


def search_with_failover(query: str, providers: list[SearchProvider], max_results: int, blocked: list[str],
                         budget_s: float, per_provider_s: float) -> SearchOutcome:
    """Ask each provider in turn within `budget_s` seconds overall; stop at the first with unblocked results."""
    outcome = SearchOutcome()
    deadline = time.monotonic() + budget_s
    for provider in providers:
        remaining = deadline - time.monotonic()
        if remaining < 1.0:
            outcome.attempts.append(Attempt(provider.name, "skipped", "no time left in TOOL_TIMEOUT"))
            continue
        attempt, kept, dropped = ask_provider(provider, query, max_results, blocked, min(per_provider_s, remaining))
        outcome.attempts.append(attempt)
        outcome.blocked += dropped
        if kept:
            outcome.results, outcome.provider = kept[:max_results], provider.name
            return outcome
    return outcome
    return outcome


def ask_provider(provider: SearchProvider, query: str, max_results: int, blocked: list[str],
                 timeout: float) -> tuple[Attempt, list[SearchResult], int]:
    """One provider's attempt, its unblocked results (deduplicated by URL) and how many were blocked."""
    try:
        # Ask for a few extra results so blocked ones can be dropped without coming up short.
        hits = provider.search(query, max_results + 3, timeout)
    except ProviderError as exc:
        return Attempt(provider.name, "rate_limited" if exc.rate_limited else "failed", str(exc)), [], 0
    except Exception as exc:  # noqa: BLE001 - a provider bug must not stop the search
        return Attempt(provider.name, "failed", f"{type(exc).__name__}: {str(exc)[:120]}"), [], 0
    kept, seen, dropped = [], set(), 0
    for hit in hits:
        if blocked_by(hit.url, blocked):
            dropped += 1
        elif hit.url not in seen:
            seen.add(hit.url)
            kept.append(hit)
    if not kept:
        detail = f"only results from blocked domains ({dropped})" if dropped else "no results"
        return Attempt(provider.name, "empty", detail), [], dropped
    return Attempt(provider.name, "answered"), kept, dropped
