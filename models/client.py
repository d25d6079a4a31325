"""The model client: `ChatOpenAI` built from settings, and the one call path that retries.

`ChatOpenAI` is built with `max_retries=0` because the retry loop lives here: every retry becomes a
`Retry` trace event, a `Retry-After` header is honoured exactly, and a shared `RequestGate` (the
batch runner's rate limiter) is asked before every attempt and told how each one went.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import openai
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import Runnable
from langchain_openai import ChatOpenAI

from models.messages import message_text
from models.ratelimit_headers import lower_headers
from models.token_estimate import ESTIMATOR
from config import Settings, redact


@dataclass(frozen=True)
class ResponseInfo:
    """What one answered request told the gate: the provider's headers and the tokens it counted."""

    headers: Mapping[str, str] = field(default_factory=dict)
    """Response headers, names lower-cased (x-ratelimit-*, retry-after, retry-after-ms)."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated_prompt_tokens: int = 0
    """The estimate the request was admitted with (so the gate can correct its budget)."""
    message: str = ""
    """A refusal's error text (providers name the limit there: 'on tokens per min (TPM): Limit 30000, ...')."""


class RequestGate(Protocol):
    """Admission control shared by concurrent runs (e.g. the batch runner's rate limiter)."""

    def acquire(self, estimated_tokens: int = 0) -> None:
        """Block until a request of about `estimated_tokens` prompt tokens may be sent."""
        ...

    def on_success(self, info: ResponseInfo | None = None) -> None:
        """A request went through; `info` carries the provider's rate-limit headers and token usage."""
        ...

    def on_rate_limited(self, retry_after: float | None, info: ResponseInfo | None = None) -> None:
        """A request was answered 429; `retry_after` is the server's hint in seconds, if any."""
        ...


class OpenGate:
    """A gate that never waits: single interactive runs need no shared limiter."""

    def acquire(self, estimated_tokens: int = 0) -> None:
        """Admit immediately."""

    def on_success(self, info: ResponseInfo | None = None) -> None:
        """Nothing to track."""

    def on_rate_limited(self, retry_after: float | None, info: ResponseInfo | None = None) -> None:
        """Nothing to track; the retry loop still backs off."""


class LLMCallError(RuntimeError):
    """A model request failed for good (retries exhausted, or an error that retrying cannot fix)."""


@dataclass
class Failure:
    """How one failed attempt is classified."""

    retriable: bool
    reason: str
    status_code: int | None = None
    retry_after_s: float | None = None


@dataclass
class CallResult:
    """A successful model call: the message, its latency and token counts."""

    message: AIMessage
    latency_s: float
    prompt_tokens: int
    completion_tokens: int
    attempts: int


RetryHook = Callable[[int, float, Failure], None]
"""Called before each retry sleep with (attempt number starting at 1, delay in seconds, the failure)."""


def build_chat_model(settings: Settings, model_name: str | None = None) -> ChatOpenAI:
    """A `ChatOpenAI` for the configured endpoint; no client-side retries (we retry, visibly)."""
    key = settings.OPENAI_API_KEY.get_secret_value() if settings.OPENAI_API_KEY else ""
    # Local servers (Ollama, vLLM) ignore the key, but the client insists on one.
    return ChatOpenAI(
        model=model_name or settings.MODEL_NAME,
        api_key=key or "not-needed",
        base_url=settings.OPENAI_BASE_URL or None,
        temperature=settings.LLM_TEMPERATURE,
        timeout=settings.LLM_TIMEOUT,
        max_retries=0,
        include_response_headers=True,  # x-ratelimit-* for the batch limiter (ResponseInfo)
        use_responses_api=False,  # OpenAI-compatible servers speak chat completions
    )


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


def classify_failure(exc: BaseException, settings: Settings) -> Failure:
    """Whether a request error is worth retrying, and what the server asked for."""
    if isinstance(exc, openai.APITimeoutError):
        return Failure(True, f"no response within LLM_TIMEOUT={settings.LLM_TIMEOUT:g}s")
    if isinstance(exc, openai.APIConnectionError):
        return Failure(True, f"connection error: {_short(exc)}")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        headers = getattr(exc.response, "headers", None) or {}
        retry_after = parse_retry_after(headers.get("retry-after"))
        if retry_after is None and headers.get("retry-after-ms"):
            ms = parse_retry_after(headers.get("retry-after-ms"))
            retry_after = ms / 1000 if ms is not None else None
        retriable = status == 429 or status >= 500
        label = "rate limited" if status == 429 else "server error" if status >= 500 else "request rejected"
        return Failure(retriable, f"HTTP {status} {label}: {_short(exc)}", status, retry_after)
    if isinstance(exc, (TimeoutError, ConnectionError)):
        return Failure(True, f"{type(exc).__name__}: {_short(exc)}")
    return Failure(False, f"{type(exc).__name__}: {_short(exc)}")


def call_model(model: Runnable[LanguageModelInput, BaseMessage], messages: Sequence[BaseMessage],
               settings: Settings, gate: RequestGate | None = None, on_retry: RetryHook | None = None,
               sleep: Callable[[float], None] = time.sleep) -> CallResult:
    """Send `messages` once, retrying 429 / 5xx / timeouts / connection errors; raise LLMCallError when it gives up.

    The delay before retry k (0-based) is the server's Retry-After when given, else
    RATE_LIMIT_RETRY_BASE_DELAY * 2**k. Other 4xx errors fail at once.
    """
    gate = gate or OpenGate()
    retries = settings.RATE_LIMIT_RETRY_MAX
    attempt = 0
    estimate = ESTIMATOR.estimate(messages, model)
    while True:
        gate.acquire(estimate)
        start = time.monotonic()
        try:
            reply = model.invoke(list(messages))
        except Exception as exc:  # noqa: BLE001 - classified below; unknown errors are not retried
            failure = classify_failure(exc, settings)
            if failure.status_code == 429:
                gate.on_rate_limited(failure.retry_after_s, _refusal_info(exc, estimate))
            if not failure.retriable:
                raise LLMCallError(redact(f"model request failed: {failure.reason}", settings)) from None
            if attempt >= retries:
                tries = "1 attempt" if attempt == 0 else f"{attempt + 1} attempts"
                raise LLMCallError(redact(f"model request failed after {tries}: {failure.reason}", settings)) from None
            delay = failure.retry_after_s if failure.retry_after_s is not None \
                else settings.RATE_LIMIT_RETRY_BASE_DELAY * (2 ** attempt)
            attempt += 1
            if on_retry is not None:
                on_retry(attempt, delay, failure)
            sleep(delay)
            continue
        latency = time.monotonic() - start
        message = reply if isinstance(reply, AIMessage) else AIMessage(content=message_text(reply))
        prompt_tokens, completion_tokens = token_usage(message)
        ESTIMATOR.observe(messages, model, prompt_tokens)
        # The headers go to the gate, not along with the message into the conversation and its traces.
        headers = lower_headers((message.response_metadata or {}).pop("headers", None))
        gate.on_success(ResponseInfo(headers,
                                     prompt_tokens, completion_tokens, estimate))
        return CallResult(message, latency, prompt_tokens, completion_tokens, attempt + 1)


def token_usage(message: AIMessage) -> tuple[int, int]:
    """(prompt, completion) tokens the server reported for this message; zeros when it did not say."""
    usage = message.usage_metadata
    if usage:
        return int(usage.get("input_tokens", 0) or 0), int(usage.get("output_tokens", 0) or 0)
    raw: Any = (message.response_metadata or {}).get("token_usage") or {}
    return int(raw.get("prompt_tokens", 0) or 0), int(raw.get("completion_tokens", 0) or 0)


def make_text_llm(model: BaseChatModel, settings: Settings, gate_of: Callable[[], RequestGate | None],
                  on_call: Callable[[CallResult], None] | None = None,
                  on_retry: RetryHook | None = None) -> Callable[[str], str]:
    """A `prompt -> text` function over the same retrying call path (the knowledge base's `hint_llm`).

    `gate_of` is asked at call time so a pipeline copy with another gate (batch runs) is honoured.
    """
    def ask(prompt: str) -> str:
        result = call_model(model, [HumanMessage(content=prompt)], settings, gate_of(), on_retry=on_retry)
        if on_call is not None:
            on_call(result)
        return message_text(result.message)

    return ask


def _refusal_info(exc: BaseException, estimate: int) -> ResponseInfo:
    """What a 429 told: its headers (x-ratelimit-*, retry-after-ms) and its message (the limit's numbers)."""
    headers = lower_headers(getattr(getattr(exc, "response", None), "headers", None))
    return ResponseInfo(headers, estimated_prompt_tokens=estimate, message=str(getattr(exc, "message", "") or exc))


def _short(exc: BaseException, limit: int = 300) -> str:
    text = (getattr(exc, "message", None) or str(exc) or type(exc).__name__).strip().replace("\n", " ")
    return text if len(text) <= limit else text[:limit] + "…"
