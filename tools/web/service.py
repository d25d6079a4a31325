"""A configured JSON web service called politely: the project's User-Agent, a timeout, a key, errors to act on.

The scholarly and map tools speak APIs the operator configured (OPENALEX_API_URL, NOMINATIM_URL, …);
those are trusted as configured, like the search providers. Every request names the project and a
contact (HTTP_USER_AGENT), as the OpenAlex, Crossref and Nominatim policies ask; Crossref also gets
`mailto` (its polite pool) when UNPAYWALL_EMAIL or CONTACT_EMAIL is set. OpenAlex retired its polite
pool: since 2026-02-13 it meters a daily budget per API key (OPENALEX_API_KEY, sent as `api_key`;
without one about $0.01 a day). A 429 that says the daily budget is spent raises `BudgetSpent` (it
renews the next day, so waiting does not help); any other failure becomes a ToolFailure naming the
service and what to try instead. Bodies are read through the bounded decoders (`tools.web.decoders`).
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from config import Settings
from tools.core.errors import ToolFailure
from tools.web.decoders import read_capped

MAX_JSON_BYTES = 32 * 2**20
"""The most a service's decoded JSON answer may take (a larger one is refused, not parsed)."""
DAILY_WORDS = ("daily", "per day", "credits", "budget", "usage limit")


def contact_email(settings: Settings) -> str:
    """The address sent to Crossref as `mailto`: UNPAYWALL_EMAIL, else CONTACT_EMAIL, else empty."""
    return (settings.UNPAYWALL_EMAIL or settings.CONTACT_EMAIL).strip()


def tool_timeout(settings: Settings) -> float:
    """Seconds one service request may take: inside TOOL_TIMEOUT, with room to build the reply."""
    return max(2.0, settings.TOOL_TIMEOUT - 1.0)


class _HideKeys(logging.Filter):
    """httpx logs every request's URL at INFO: an `api_key` in it is masked before any handler sees it."""

    KEY = re.compile(r"(api_key=)[^&\s'\"]+")

    def filter(self, record: logging.LogRecord) -> bool:
        if "api_key=" in record.getMessage():
            record.msg, record.args = self.KEY.sub(r"\1***", record.getMessage()), ()
        return True


logging.getLogger("httpx").addFilter(_HideKeys())


class NotFound(Exception):
    """The service answered 404: the thing asked for does not exist there."""


class BudgetSpent(ToolFailure):
    """The service's daily budget (credits) is spent: it renews the next day, so the run stops asking."""


@dataclass
class Service:
    """One configured JSON API: where it is, what it is called in messages, and how to be polite to it."""

    name: str
    """How replies name the service, e.g. 'OpenAlex'."""
    base_url: str
    timeout_s: float
    user_agent: str
    mailto: str = ""
    """Sent as the `mailto` parameter (Crossref's polite pool) when set."""
    api_key: str = field(default="", repr=False)
    """Sent as the `api_key` parameter (OpenAlex) when set; never in a message, a repr or a trace."""
    fallback: str = "web_search"
    """What the model can try when the service fails."""
    throttle: MinInterval | None = None
    """Called before every request (Nominatim's one request per second)."""
    requests: int = field(default=0, init=False)

    def url(self, path: str) -> str:
        """The full URL of `path` under the service's base URL."""
        return self.base_url.rstrip("/") + "/" + path.lstrip("/") if path else self.base_url

    def get_json(self, path: str, params: dict[str, Any] | None = None, method: str = "GET",
                 data: dict[str, str] | None = None, accept: tuple[int, ...] = ()) -> Any:
        """The JSON answer to one request; NotFound on 404, ToolFailure on any other failure.

        `accept`: error statuses whose JSON body is an answer (OSRM says NoRoute with HTTP 400).
        """
        query = dict(params or {})
        if self.mailto:
            query.setdefault("mailto", self.mailto)
        if self.api_key:
            query["api_key"] = self.api_key
        headers = {"User-Agent": self.user_agent, "Accept": "application/json"}
        if self.throttle is not None:
            self.throttle()
        self.requests += 1
        try:
            with httpx.Client(timeout=self.timeout_s, follow_redirects=True, headers=headers) as client, \
                    client.stream(method, self.url(path), params=query, data=data) as response:
                body, cut = read_capped(response, MAX_JSON_BYTES, self.name)
        except httpx.TimeoutException:
            raise self.failure(f"did not answer within {self.timeout_s:.0f}s", "timeout") from None
        except httpx.HTTPError as exc:
            said = _HideKeys.KEY.sub(r"\1***", str(exc))  # an error may quote the URL, key included
            raise self.failure(f"could not be reached ({type(exc).__name__}: {said[:100]})",
                               "network_error") from None
        finally:
            if self.throttle is not None:
                self.throttle.done()  # the next request waits a whole interval from this answer too
        if response.status_code == 404:
            raise NotFound(body[:200].decode("utf-8", "replace"))
        if response.status_code == 429:
            raise self.rate_limited(response, body)
        if response.status_code >= 400 and response.status_code not in accept:
            raise self.failure(f"answered HTTP {response.status_code} ({_detail(response, body)})", "http_error")
        if cut:
            raise self.failure(f"answered with more than {MAX_JSON_BYTES // 2**20} MB of JSON", "size_limit")
        try:
            return json.loads(body)
        except ValueError:
            kind = response.headers.get("content-type", "unknown type")
            raise self.failure(f"answered with something that is not JSON ({kind})", "http_error") from None

    def rate_limited(self, response: httpx.Response, body: bytes) -> ToolFailure:
        """The 429's meaning: the daily budget spent (`BudgetSpent`, its remaining credits at 0) or a burst limit.

        OpenAlex sends `X-RateLimit-Remaining` (credits, or dollars, left today) on every answer and a
        JSON `{"error", "message"}` body on errors.
        """
        detail = _detail(response, body)
        remaining = response.headers.get("x-ratelimit-remaining", "").strip()
        try:
            spent = float(remaining) <= 0
        except ValueError:
            spent = False
        if spent or any(word in detail.lower() for word in DAILY_WORDS):
            return BudgetSpent(f"{self.name}'s daily budget is spent (HTTP 429: {detail}). It renews the next day "
                               "(UTC), so waiting does not help", "http_error")
        return self.failure(f"is rate limiting (HTTP 429: {detail}); wait a few seconds before asking it again",
                            "http_error")

    def failure(self, what: str, kind: Any) -> ToolFailure:
        """A ToolFailure saying the service `what`, and what to try instead."""
        return ToolFailure(f"{self.name} ({self.base_url}) {what}. Try again later, or use {self.fallback}.", kind)


def _detail(response: httpx.Response, raw: bytes) -> str:
    text = raw[:20_000].decode("utf-8", "replace")
    try:
        body = json.loads(text)
    except ValueError:
        return " ".join(re.sub(r"<[^>]+>", " ", text).split())[:160] or response.reason_phrase
    if isinstance(body, dict):
        for key in ("message", "error", "developer-message", "user-message", "remark"):
            value = body.get(key)
            if isinstance(value, str) and value:
                return value[:160]
            if isinstance(value, list) and value:
                return str(value[0])[:160]
    return str(body)[:160]


class MinInterval:
    """At most one call per `interval` seconds across every thread of the process (a usage policy's limit)."""

    def __init__(self, interval: float, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.interval = interval
        self._clock, self._sleep = clock, sleep
        self._next = 0.0
        self._lock = threading.Lock()

    def __call__(self) -> None:
        """Wait until the next call is allowed, and claim it."""
        with self._lock:
            now = self._clock()
            wait = self._next - now
            self._next = max(now, self._next) + self.interval
        if wait > 0:
            self._sleep(wait)

    def done(self) -> None:
        """The claimed call has ended: the next one waits `interval` from now as well.

        Counting from the start alone lets two requests arrive closer than `interval` at the service
        when the first one is slow to leave (a busy machine, a slow connection).
        """
        with self._lock:
            self._next = max(self._next, self._clock() + self.interval)
