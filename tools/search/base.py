"""What every search provider shares: the result type, the failure type, JSON over HTTP, URL blocking.

Providers that are one JSON API over HTTP (Tavily, SearXNG, Wikipedia) build on `KeyedHTTPProvider`:
base URL, optional bearer key and User-Agent in one place, every failure a ProviderError.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpx

USER_AGENT = "gaia-agent-harness/0.1.0 (+https://github.com/gaia-agent-harness/gaia-agent-harness) python-httpx"
"""The default of Settings.HTTP_USER_AGENT, for callers that have no settings at hand."""


@dataclass(frozen=True)
class SearchResult:
    """One hit: where it is and what it says."""

    title: str
    url: str
    snippet: str


class ProviderError(Exception):
    """A provider could not answer; `rate_limited` marks HTTP 429 / the provider's own rate-limit signal."""

    def __init__(self, message: str, rate_limited: bool = False, body: str = "") -> None:
        super().__init__(message)
        self.rate_limited = rate_limited
        self.body = body
        """The start of the error response's body (services explain a refusal there)."""


class ProviderUnavailable(Exception):
    """A provider cannot be used at all in this configuration (no key, no URL, package missing)."""


class SearchProvider(Protocol):
    """A search backend: `search` returns results or raises ProviderError."""

    name: str

    def search(self, query: str, max_results: int, timeout: float) -> list[SearchResult]:
        """Up to `max_results` results for `query`, within `timeout` seconds."""
        ...


def request_json(method: str, url: str, timeout: float, user_agent: str = USER_AGENT, **kwargs: Any) -> Any:
    """One HTTP request whose answer must be JSON; every failure becomes a ProviderError."""
    response = request(method, url, timeout, accept="application/json", user_agent=user_agent, **kwargs)
    try:
        return response.json()
    except ValueError:
        raise ProviderError(f"answered with non-JSON content "
                            f"({response.headers.get('content-type', 'unknown type')})") from None


def request(method: str, url: str, timeout: float, accept: str = "*/*", user_agent: str = USER_AGENT,
            **kwargs: Any) -> httpx.Response:
    """One HTTP request to a service the operator configured; network and HTTP failures become ProviderError."""
    headers = {"User-Agent": user_agent, "Accept": accept, **kwargs.pop("headers", {})}
    try:
        with httpx.Client(timeout=timeout, follow_redirects=True, headers=headers) as client:
            response = client.request(method, url, **kwargs)
    except httpx.TimeoutException:
        raise ProviderError(f"timed out after {timeout:.0f}s") from None
    except httpx.HTTPError as exc:
        raise ProviderError(f"network error ({type(exc).__name__}: {str(exc)[:100]})") from None
    if response.status_code == 429:
        raise ProviderError("rate limited (HTTP 429)", rate_limited=True)
    if response.status_code >= 400:
        raise ProviderError(f"HTTP {response.status_code} {response.reason_phrase}".strip(),
                            body=response.text[:20_000])
    return response


class KeyedHTTPProvider:
    """A search provider that is one JSON API over HTTP at `base_url`, with an optional bearer `api_key`."""

    name: str = ""

    def __init__(self, base_url: str, api_key: str = "", user_agent: str = USER_AGENT) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.user_agent = user_agent

    def call_json(self, method: str, path: str, timeout: float, **kwargs: Any) -> Any:
        """`method {base_url}{path}` answering JSON (the key as `Authorization: Bearer` when there is one)."""
        headers = {**kwargs.pop("headers", {}), **({"Authorization": f"Bearer {self.api_key}"} if self.api_key else {})}
        return request_json(method, self.base_url + path, timeout, user_agent=self.user_agent, headers=headers,
                            **kwargs)

    @staticmethod
    def result_list(data: Any, key: str, hint: str = "") -> list[dict[str, Any]]:
        """The JSON answer's list of result objects under `key`; ProviderError when the answer has none."""
        items = data.get(key) if isinstance(data, dict) else None
        if not isinstance(items, list):
            raise ProviderError(f"unexpected JSON shape (no {key!r} list){hint}")
        return [item for item in items if isinstance(item, dict)]


def normalise_url(url: str) -> str:
    """Scheme-less, lower-case host+path ('https://www.Example.org/a' -> 'example.org/a') for prefix checks."""
    text = url.strip()
    parts = urlsplit(text if "://" in text else "//" + text)
    host = (parts.hostname or "").lower()
    if host.startswith("www."):
        host = host[4:]
    return (host + parts.path).lower()


def blocked_prefixes(setting: str) -> list[str]:
    """BLOCKED_DOMAINS (comma-separated URL prefixes) in normalised form."""
    return [normalise_url(p) for p in setting.split(",") if p.strip()]


def blocked_by(url: str, prefixes: list[str]) -> str | None:
    """The blocked prefix that `url` falls under, if any."""
    target = normalise_url(url)
    return next((p for p in prefixes if target.startswith(p)), None)


def plain_text(html_fragment: str) -> str:
    """Text of a small HTML fragment (search snippets carry <span class=searchmatch> and entities)."""
    from bs4 import BeautifulSoup

    return " ".join(BeautifulSoup(html_fragment or "", "html.parser").get_text(" ").split())
