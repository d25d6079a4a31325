"""The model client: `ChatOpenAI` built from settings, and the one call path that retries.

`ChatOpenAI` is built with `max_retries=0` because the retry loop lives here: every retry becomes a
`Retry` trace event, a `Retry-After` header is honoured exactly, and a shared `RequestGate` (the
batch runner's rate limiter) is asked before every attempt and told how each one went. What a failure
means and whether to try again is `models.failures`' decision.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import Runnable
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from config import Settings, redact
from models.compat import CompatibleChatOpenAI
from models.endpoint import Role, endpoint_for
from models.failures import Failure, classify_failure, give_up_message, is_permanent, next_delay
from models.messages import message_text
from models.ratelimit_headers import lower_headers
from models.token_estimate import PromptEstimator


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

    def __init__(self, message: str, failure: Failure | None = None, *, permanent: bool = False) -> None:
        super().__init__(message)
        self.failure = failure
        """The last attempt's classification (None when the request was refused before it was sent)."""
        self.permanent = permanent
        """Sending the same request again cannot succeed (`models.failures.is_permanent`)."""


@dataclass
class CallResult:
    """A successful model call: the message, its latency, token counts and why the model stopped."""

    message: AIMessage
    latency_s: float
    prompt_tokens: int
    completion_tokens: int
    attempts: int
    finish_reason: str | None = None
    """The server's `finish_reason`: 'stop', 'tool_calls', 'length' (cut at the completion limit), …"""
    usage_reported: bool = True
    """False when the server sent no token usage (the counts are then zero, not measured)."""
    model_name: str = ""

    @property
    def truncated(self) -> bool:
        """True when the reply was cut at the completion limit (or the server's context) mid-generation."""
        return self.finish_reason == "length"


RetryHook = Callable[[int, float, Failure], None]
"""Called before each retry sleep with (attempt number starting at 1, delay in seconds, the failure)."""


def build_chat_model(settings: Settings, model_name: str | None = None, role: Role = "agent") -> ChatOpenAI:
    """A chat model on `role`'s endpoint: completion limit set, no client-side retries (we retry, visibly)."""
    endpoint = endpoint_for(settings, role)
    # Local servers (Ollama, vLLM) ignore the key, but the client insists on one.
    return CompatibleChatOpenAI(
        model=model_name or settings.MODEL_NAME,
        api_key=SecretStr(endpoint.key or "not-needed"),
        base_url=endpoint.base_url or None,
        temperature=settings.LLM_TEMPERATURE,
        timeout=settings.LLM_TIMEOUT,
        # max_completion_tokens is the field's alias (the wire name is fixed up in compat); without it a small local
        # model can loop until its context is full
        max_completion_tokens=settings.LLM_MAX_TOKENS,
        max_retries=0,
        include_response_headers=True,  # x-ratelimit-* for the batch limiter (ResponseInfo)
        use_responses_api=False,  # OpenAI-compatible servers speak chat completions
    )


def call_model(model: Runnable[LanguageModelInput, BaseMessage], messages: Sequence[BaseMessage],
               settings: Settings, gate: RequestGate | None = None, on_retry: RetryHook | None = None,
               sleep: Callable[[float], None] = time.sleep, *, base_url: str | None = None,
               estimator: PromptEstimator | None = None) -> CallResult:
    """Send `messages`, retrying as `models.failures.next_delay` decides; raise LLMCallError when it gives up.

    `base_url` is the endpoint `model` talks to, named in connection failures (default OPENAI_BASE_URL);
    `estimator` sizes the request and learns from its usage (default: a fresh one, which knows no ratio yet).

    The delay before retry k (0-based) is the server's Retry-After when given, else
    RATE_LIMIT_RETRY_BASE_DELAY * 2**k; timeouts and unreachable endpoints get one quick retry, and
    a server error repeated identically is not retried again.
    """
    gate = gate or OpenGate()
    earlier: list[Failure] = []
    estimator = estimator or PromptEstimator()
    estimate = estimator.estimate(messages, model)
    while True:
        gate.acquire(estimate)
        start = time.monotonic()
        try:
            reply = model.invoke(list(messages))
        except Exception as exc:  # noqa: BLE001 - classified below; unknown errors are not retried
            failure = classify_failure(exc, settings, estimate, base_url=base_url)
            if failure.status_code == 429:
                gate.on_rate_limited(failure.retry_after_s, _refusal_info(exc, estimate))
            delay = next_delay(failure, earlier, settings)
            if delay is None:
                raise LLMCallError(redact(give_up_message(failure, earlier), settings), failure,
                                   permanent=is_permanent(failure, earlier)) from None
            earlier.append(failure)
            if on_retry is not None:
                on_retry(len(earlier), delay, failure)
            sleep(delay)
            continue
        latency = time.monotonic() - start
        message = reply if isinstance(reply, AIMessage) else AIMessage(content=message_text(reply))
        prompt_tokens, completion_tokens = token_usage(message)
        estimator.observe(messages, model, prompt_tokens)
        # The headers go to the gate, not along with the message into the conversation and its traces.
        headers = lower_headers((message.response_metadata or {}).pop("headers", None))
        gate.on_success(ResponseInfo(headers, prompt_tokens, completion_tokens, estimate))
        return _result(message, latency, len(earlier) + 1)


def _result(message: AIMessage, latency: float, attempts: int) -> CallResult:
    prompt_tokens, completion_tokens = token_usage(message)
    meta = message.response_metadata or {}
    reported = bool(message.usage_metadata or meta.get("token_usage"))
    return CallResult(message, latency, prompt_tokens, completion_tokens, attempts,
                      finish_reason=meta.get("finish_reason"), usage_reported=reported,
                      model_name=str(meta.get("model_name") or meta.get("model") or ""))


def token_usage(message: AIMessage) -> tuple[int, int]:
    """(prompt, completion) tokens the server reported for this message; zeros when it did not say."""
    usage = message.usage_metadata
    if usage:
        return int(usage.get("input_tokens", 0) or 0), int(usage.get("output_tokens", 0) or 0)
    raw: Any = (message.response_metadata or {}).get("token_usage") or {}
    return int(raw.get("prompt_tokens", 0) or 0), int(raw.get("completion_tokens", 0) or 0)


def _refusal_info(exc: BaseException, estimate: int) -> ResponseInfo:
    """What a 429 told: its headers (x-ratelimit-*, retry-after-ms) and its message (the limit's numbers)."""
    headers = lower_headers(getattr(getattr(exc, "response", None), "headers", None))
    return ResponseInfo(headers, estimated_prompt_tokens=estimate, message=str(getattr(exc, "message", "") or exc))
