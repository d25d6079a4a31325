"""Reading what a provider says about its limits: durations, budgets, Retry-After, 429 messages."""

from __future__ import annotations

import pytest

from models.ratelimit_headers import budget, limit_from_message, lower_headers, parse_duration, retry_after_s


@pytest.mark.parametrize("text, seconds", [("480ms", 0.48), ("2.68s", 2.68), ("6m0s", 360.0), ("1h2m", 3720.0),
                                           ("0.5", 0.5), ("", None), ("soon", None), ("5 parsecs", None)])
def test_durations_in_the_forms_providers_send(text, seconds):
    assert parse_duration(text) == (pytest.approx(seconds) if seconds is not None else None)


def test_a_per_minute_budget_and_its_rate():
    headers = lower_headers({"X-RateLimit-Limit-Tokens": "30000", "X-RateLimit-Remaining-Tokens": "29000",
                             "X-RateLimit-Reset-Tokens": "2s"})
    tokens = budget(headers, "tokens")
    assert tokens is not None and (tokens.limit, tokens.remaining, tokens.reset_s) == (30000, 29000, 2.0)
    assert tokens.rate_per_s == pytest.approx(500.0)
    assert budget(headers, "requests") is None


def test_a_per_day_budget_in_the_same_header_shows_in_its_reset():
    daily = budget({"x-ratelimit-limit-requests": "14400", "x-ratelimit-remaining-requests": "14399",
                    "x-ratelimit-reset-requests": "6s"}, "requests")
    assert daily is not None and daily.rate_per_s == pytest.approx(1 / 6)  # not 14400 / 60


def test_retry_after_prefers_milliseconds():
    assert retry_after_s({"retry-after": "2", "retry-after-ms": "1500"}) == 1.5
    assert retry_after_s({"retry-after": "2"}) == 2.0
    assert retry_after_s({}) is None


def test_the_limit_named_in_a_429_message():
    notice = limit_from_message("Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): "
                                "Limit 30000, Used 29500, Requested 1200. Please try again in 2.4s.")
    assert notice is not None and notice.kind == "tokens"
    assert notice.rate_per_s == pytest.approx(500.0) and notice.remaining == 500
    daily = limit_from_message("Rate limit reached on requests per day (RPD): Limit 14400, Used 14400")
    assert daily is not None and daily.kind == "requests" and daily.rate_per_s == pytest.approx(14400 / 86400)
    assert limit_from_message("Rate limit reached") is None
