"""What a failed model request means, and whether (and when) to send it again.

Classified by meaning, not only by status:

- rate limits (429), overload (502/503/504) and dropped connections back off, honouring Retry-After;
- another server error (e.g. a 500) is retried, but the same status and body twice is permanent;
- a timeout is retried once (a runaway generation would only repeat);
- an unreachable endpoint (connection refused, DNS, TLS) gets one quick retry;
- a context overflow and other rejected requests fail at once, with the server's own words.
"""

from __future__ import annotations

import email.utils
import re
import ssl
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, cast

import httpx2
import openai

from config import Settings

FailureKind = Literal["rate_limited", "overloaded", "server_error", "connection_reset", "unreachable", "timeout",
                      "context_length", "rejected", "unexpected"]

QUICK_RETRY_DELAY = 1.0
"""Seconds before the one retry of an unreachable endpoint or a timed-out request."""

_BACKOFF_KINDS = frozenset({"rate_limited", "overloaded", "connection_reset", "server_error"})
_OVERLOAD_STATUSES = frozenset({502, 503, 504})
_CONTEXT_WORDS = re.compile(r"context (length|window|size)|maximum context|n_ctx|too many tokens|prompt is too long|"
                            r"exceed(s|ed)? (the )?(available )?context", re.I)


@dataclass
class Failure:
    """How one failed attempt is classified."""

    retriable: bool
    reason: str
    """One line for the trace and the final error: what happened, with the server's message."""
    status_code: int | None = None
    retry_after_s: float | None = None
    kind: FailureKind = "unexpected"
    signature: str = ""
    """Status and body of an HTTP error: two equal signatures in a row mean the error is permanent."""
    context_limit: int | None = None
    """A context overflow's window as the server stated it (tokens), when it named one."""


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a `Retry-After` header: delta-seconds or an HTTP date; None if absent or unreadable."""
    if value is None or not str(value).strip():
        return None
    value = str(value).strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def classify_failure(exc: BaseException, settings: Settings, prompt_tokens: int = 0, *,
                     base_url: str | None = None) -> Failure:
    """Classify a request error; `prompt_tokens` (an estimate) explains a context overflow.

    `base_url` names the endpoint in connection failures (default OPENAI_BASE_URL, the agent's).
    """
    if isinstance(exc, openai.APITimeoutError):
        return Failure(True, f"no response within LLM_TIMEOUT={settings.LLM_TIMEOUT:g}s", kind="timeout")
    if isinstance(exc, openai.APIConnectionError):
        return _connection_failure(exc, settings.OPENAI_BASE_URL if base_url is None else base_url)
    if isinstance(exc, openai.APIStatusError):
        return _status_failure(exc, prompt_tokens)
    if isinstance(exc, TimeoutError):
        return Failure(True, f"TimeoutError: {short_message(exc)}", kind="timeout")
    if isinstance(exc, ConnectionRefusedError):
        return Failure(True, f"connection refused: {short_message(exc)}", kind="unreachable")
    if isinstance(exc, ConnectionError):
        return Failure(True, f"{type(exc).__name__}: {short_message(exc)}", kind="connection_reset")
    return Failure(False, f"{type(exc).__name__}: {short_message(exc)}")


def next_delay(failure: Failure, earlier: Sequence[Failure], settings: Settings) -> float | None:
    """Seconds to wait before sending again, or None to give up (`earlier`: this request's previous failures)."""
    if not failure.retriable or len(earlier) >= settings.RATE_LIMIT_RETRY_MAX:
        return None
    if failure.kind in ("timeout", "unreachable"):
        return None if any(f.kind == failure.kind for f in earlier) else QUICK_RETRY_DELAY
    if failure.kind == "server_error" and earlier and earlier[-1].signature == failure.signature:
        return None
    if failure.retry_after_s is not None:
        return failure.retry_after_s
    return cast(float, settings.RATE_LIMIT_RETRY_BASE_DELAY * (2 ** len(earlier)))


def is_permanent(failure: Failure, earlier: Sequence[Failure]) -> bool:
    """True when sending the same request again cannot succeed.

    That is a refused request (4xx, a context overflow) or the same server error twice; rate limits,
    overload, timeouts and unreachable endpoints pass.
    """
    if failure.kind in ("rejected", "context_length"):
        return True
    return failure.kind == "server_error" and bool(earlier) and earlier[-1].signature == failure.signature


def give_up_message(failure: Failure, earlier: Sequence[Failure]) -> str:
    """The final error of a request: how often it was tried and why it stopped."""
    attempts = len(earlier) + 1
    if failure.kind == "server_error" and earlier and earlier[-1].signature == failure.signature:
        return f"model request failed: the server gave the same error twice ({failure.reason})"
    if not failure.retriable:
        return f"model request failed: {failure.reason}"
    tries = "1 attempt" if attempts == 1 else f"{attempts} attempts"
    return f"model request failed after {tries}: {failure.reason}"


def _connection_failure(exc: openai.APIConnectionError, base_url: str | None) -> Failure:
    where = base_url or "the OpenAI API"
    causes = list(_causes(exc))
    if any(isinstance(c, ssl.SSLError) for c in causes):
        return Failure(True, f"{where}: TLS error: {short_message(causes[-1])}", kind="unreachable")
    if any(isinstance(c, httpx2.ConnectError) for c in causes):
        text = " ".join(str(c) for c in causes).lower()
        if "name or service not known" in text or "nodename nor servname" in text or "getaddrinfo" in text \
                or "name resolution" in text:
            what = "DNS lookup failed"
        elif "refused" in text:
            what = "connection refused"
        elif "ssl" in text or "certificate" in text:
            what = "TLS error"
        else:
            what = f"cannot connect ({short_message(causes[-1])})"
        return Failure(True, f"{where}: {what}", kind="unreachable")
    return Failure(True, f"connection error: {short_message(causes[-1])}", kind="connection_reset")


def _status_failure(exc: openai.APIStatusError, prompt_tokens: int) -> Failure:
    status = exc.status_code
    headers = getattr(exc.response, "headers", None) or {}
    retry_after = parse_retry_after(headers.get("retry-after"))
    if retry_after is None and headers.get("retry-after-ms"):
        ms = parse_retry_after(headers.get("retry-after-ms"))
        retry_after = ms / 1000 if ms is not None else None
    message = short_message(exc)
    signature = f"{status} {_body_text(exc)}"
    if status != 429 and _CONTEXT_WORDS.search(_body_text(exc) or message):
        text = _body_text(exc) or message
        return Failure(False, context_overflow_reason(text, prompt_tokens, status), status,
                       kind="context_length", signature=signature, context_limit=stated_context_limit(text))
    if status == 429:
        return Failure(True, f"HTTP 429 rate limited: {message}", status, retry_after, "rate_limited", signature)
    if status in _OVERLOAD_STATUSES:
        return Failure(True, f"HTTP {status} server overloaded: {message}", status, retry_after, "overloaded",
                       signature)
    if status >= 500:
        return Failure(True, f"HTTP {status} server error: {message}", status, retry_after, "server_error", signature)
    return Failure(False, f"HTTP {status} request rejected: {message}", status, retry_after, "rejected", signature)


def context_overflow_reason(server_text: str, prompt_tokens: int, status: int | None = None) -> str:
    """Say how big the prompt was and what the server allows, with the server's own words."""
    numbers = [int(n) for n in re.findall(r"\d{3,}", server_text) if int(n) != status]
    limit = _limit_from(server_text, numbers)
    asked = max((n for n in numbers if limit is None or n != limit), default=0) or prompt_tokens
    size = f"the prompt is about {asked:,} tokens" if asked else "the prompt is too long"
    allowed = f"the server's context holds {limit:,}" if limit else "more than the server's context holds"
    return (f"context length exceeded: {size}, {allowed} (server: {short_message_text(server_text, 200)}). "
            "Give the server a larger context (llama.cpp -c / n_ctx, Ollama num_ctx, vLLM --max-model-len), "
            "lower LLM_MAX_TOKENS, or use a model with a longer context.")


def stated_context_limit(text: str) -> int | None:
    """The window an overflow error names ('maximum context length is 16384 tokens', 'n_ctx: 8192'), if any."""
    return _limit_from(text, [])


def _limit_from(text: str, numbers: list[int]) -> int | None:
    for pattern in (r"context (?:window|length|size)(?: of| is)?\s*(?:is\s*)?(\d+)", r"maximum context length is (\d+)",
                    r"n_ctx(?:_slot)?\W{0,3}(\d+)", r"max_model_len\W{0,3}(\d+)"):
        match = re.search(pattern, text, re.I)
        if match:
            return int(match.group(1))
    return None


def _body_text(exc: openai.APIStatusError) -> str:
    try:
        return exc.response.text.strip()
    except Exception:  # noqa: BLE001 - a streamed or closed response has no text to compare
        return str(exc.body or "")


def _causes(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def short_message(exc: BaseException, limit: int = 300) -> str:
    """The exception's message on one line, cut to `limit` characters."""
    return short_message_text(getattr(exc, "message", None) or str(exc) or type(exc).__name__, limit)


def short_message_text(text: str, limit: int = 300) -> str:
    """`text` on one line, cut to `limit` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"
