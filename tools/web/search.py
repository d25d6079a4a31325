"""web_search: the search providers, all at once (SEARCH_FANOUT=all) or with failover, numbered for the model.

Results from BLOCKED_DOMAINS are removed so a search result cannot leak GAIA's ground truth, and the
time budget derives from TOOL_TIMEOUT so the tool finishes (and says why) before the executor gives up.
"""

from __future__ import annotations

from langchain_core.tools import BaseTool, tool

from config import Settings
from tools.core.errors import ToolFailure
from tools.search import SearchOutcome, blocked_prefixes, configured_providers, search_with_failover
from tools.search.fanout import search_all


def format_outcome(query: str, outcome: SearchOutcome) -> str:
    """Numbered results (title, URL, snippet) and a last line saying which provider answered."""
    lines = [f"Search results for {query!r}:"]
    for number, hit in enumerate(outcome.results, start=1):
        lines.append(f"{number}. {hit.title}\n   URL: {hit.url}")
        if hit.snippet:
            lines.append(f"   {hit.snippet}")
    others = [f"{a.provider} {a.status}" + (f" ({a.detail})" if a.detail else "")
              for a in outcome.attempts if a.status != "answered"]
    footer = f"(answered by {outcome.provider}"
    if outcome.blocked:
        footer += f"; {outcome.blocked} result(s) from blocked domains removed"
    if others:
        footer += "; " + "; ".join(others)
    return "\n".join(lines) + "\n" + footer + ")"


def failure_message(query: str, outcome: SearchOutcome) -> str:
    """Why nothing came back, per provider, and what to try instead."""
    reasons = "; ".join(f"{a.provider}: {a.status}" + (f" ({a.detail})" if a.detail else "") for a in outcome.attempts)
    return (f"web_search found no results for {query!r}. "
            f"{reasons or 'No search provider is configured (SEARCH_PROVIDERS)'}. "
            "Try a shorter or differently worded query, or fetch_webpage on a page you know "
            "(e.g. https://en.wikipedia.org/wiki/<Title>).")


def make_search_tools(settings: Settings) -> list[BaseTool]:
    """Build web_search from the search, blocking and timeout settings."""
    blocked = blocked_prefixes(settings.BLOCKED_DOMAINS)
    max_results = settings.SEARCH_MAX_RESULTS
    budget_s = max(2.0, settings.TOOL_TIMEOUT - 1.0)  # finish before the executor's own deadline
    per_provider_s = max(2.0, min(15.0, settings.TOOL_TIMEOUT / 3))  # room for a failover or two
    search = search_all if settings.SEARCH_FANOUT == "all" else search_with_failover

    @tool
    def web_search(query: str) -> str:
        """Search the web and return the top results, each with title, URL and a snippet.

        Use short keyword queries (e.g. "1928 Olympics athletes by country"). Open a promising result
        with fetch_webpage to read the full page before relying on it.

        Args:
            query: What to search for, as keywords or a short question.
        """
        query = (query or "").strip()
        if not query:
            raise ToolFailure("the query is empty. Pass the keywords to search for.", "bad_arguments")
        providers, skipped = configured_providers(settings)
        outcome = search(query, providers, max_results, blocked, budget_s, per_provider_s)
        outcome.attempts = skipped + outcome.attempts
        if not outcome.results:
            raise ToolFailure(failure_message(query, outcome), "no_results")
        return format_outcome(query, outcome)

    return [web_search]
