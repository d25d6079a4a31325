"""The LLM call path: retry classification, Retry-After, the request gate, client construction."""

from __future__ import annotations

import email.utils
import time

import httpx2
import openai
import pytest
from pydantic import SecretStr

from config import load_settings
from models.client import LLMCallError, build_chat_model, call_model
from models.failures import classify_failure, parse_retry_after
from tests.support.fake_model import ScriptedChatModel, ai

URL = "http://127.0.0.1:9/v1/chat/completions"


def status_error(status: int, headers: dict[str, str] | None = None) -> openai.APIStatusError:
    response = httpx2.Response(status, headers=headers or {}, request=httpx2.Request("POST", URL))
    cls = {429: openai.RateLimitError, 400: openai.BadRequestError, 401: openai.AuthenticationError}.get(
        status, openai.InternalServerError if status >= 500 else openai.APIStatusError)
    return cls(f"status {status}", response=response, body=None)


class RecordingGate:
    def __init__(self) -> None:
        self.log: list[tuple[str, float | None]] = []

    def acquire(self, estimated_tokens: int = 0) -> None:
        self.log.append(("acquire", None))

    def on_success(self, info=None) -> None:
        self.log.append(("success", None))

    def on_rate_limited(self, retry_after: float | None, info=None) -> None:
        self.log.append(("rate_limited", retry_after))


def test_parse_retry_after_seconds_and_dates() -> None:
    assert parse_retry_after("1") == 1.0
    assert parse_retry_after(" 2.5 ") == 2.5
    assert parse_retry_after(None) is None and parse_retry_after("") is None and parse_retry_after("soon") is None
    assert parse_retry_after("-3") == 0.0
    now = time.time()
    date = email.utils.formatdate(now + 30, usegmt=True)
    wait = parse_retry_after(date, now=now)
    assert wait is not None and 28 <= wait <= 31
    assert parse_retry_after(email.utils.formatdate(now - 100, usegmt=True), now=now) == 0.0


@pytest.mark.parametrize(("exc", "retriable", "status"), [
    (status_error(429), True, 429), (status_error(500), True, 500), (status_error(503), True, 503),
    (status_error(400), False, 400), (status_error(401), False, 401), (status_error(404), False, 404),
    (openai.APITimeoutError(httpx2.Request("POST", URL)), True, None),
    (openai.APIConnectionError(request=httpx2.Request("POST", URL)), True, None),
    (ValueError("bug"), False, None),
])
def test_classification(exc: BaseException, retriable: bool, status: int | None) -> None:
    failure = classify_failure(exc, load_settings())
    assert (failure.retriable, failure.status_code) == (retriable, status)


def test_classification_reads_retry_after_headers() -> None:
    s = load_settings()
    assert classify_failure(status_error(429, {"Retry-After": "7"}), s).retry_after_s == 7.0
    assert classify_failure(status_error(503, {"retry-after-ms": "250"}), s).retry_after_s == 0.25
    assert "LLM_TIMEOUT=120" in classify_failure(openai.APITimeoutError(httpx2.Request("POST", URL)), s).reason


def test_backoff_doubles_and_retry_after_wins() -> None:
    settings = load_settings(RATE_LIMIT_RETRY_MAX=4, RATE_LIMIT_RETRY_BASE_DELAY=10)
    model = ScriptedChatModel(script=[status_error(500), status_error(429), status_error(429, {"Retry-After": "3"}),
                                      status_error(502), ai("ok")])
    slept: list[float] = []
    retries: list[tuple[int, float]] = []
    gate = RecordingGate()
    result = call_model(model, [], settings, gate, on_retry=lambda a, d, f: retries.append((a, d)), sleep=slept.append)
    assert slept == [10, 20, 3, 80]
    assert retries == [(1, 10), (2, 20), (3, 3), (4, 80)]
    assert result.attempts == 5 and result.message.content == "ok"
    assert [k for k, _ in gate.log].count("acquire") == 5  # before every attempt
    assert ("rate_limited", None) in gate.log and ("rate_limited", 3.0) in gate.log
    assert gate.log[-1] == ("success", None)
    assert (result.prompt_tokens, result.completion_tokens) == (10, 5)


def test_client_errors_are_not_retried() -> None:
    model = ScriptedChatModel(script=[status_error(400), ai("never")])
    slept: list[float] = []
    with pytest.raises(LLMCallError, match="HTTP 400"):
        call_model(model, [], load_settings(), sleep=slept.append)
    assert slept == [] and len(model.calls) == 1


def test_gives_up_after_max_retries() -> None:
    model = ScriptedChatModel(script=[status_error(503)] * 3)
    with pytest.raises(LLMCallError, match="after 3 attempts"):
        call_model(model, [], load_settings(RATE_LIMIT_RETRY_MAX=2), sleep=lambda s: None)


def test_zero_retries_means_one_attempt() -> None:
    model = ScriptedChatModel(script=[status_error(429)])
    with pytest.raises(LLMCallError, match="after 1 attempt:"):
        call_model(model, [], load_settings(RATE_LIMIT_RETRY_MAX=0), sleep=lambda s: None)


def test_error_messages_are_redacted() -> None:
    settings = load_settings(OPENAI_API_KEY="sk-very-secret-key")
    model = ScriptedChatModel(script=[ValueError("bad key sk-very-secret-key")])
    with pytest.raises(LLMCallError) as info:
        call_model(model, [], settings)
    assert "sk-very-secret-key" not in str(info.value) and "***" in str(info.value)


def test_build_chat_model_from_settings() -> None:
    s = load_settings(OPENAI_BASE_URL="http://localhost:11434/v1", MODEL_NAME="qwen3:8b", LLM_TIMEOUT=33,
                      LLM_TEMPERATURE=0.2)
    model = build_chat_model(s)
    assert model.model_name == "qwen3:8b" and model.max_retries == 0 and model.request_timeout == 33
    assert isinstance(model.openai_api_key, SecretStr)
    assert model.openai_api_key.get_secret_value() == "not-needed"  # Ollama needs no key
    assert str(model.root_client.base_url).startswith("http://localhost:11434/v1")
    assert model.temperature == 0.2
    keyed = build_chat_model(load_settings(OPENAI_API_KEY="sk-abc123"), model_name="gpt-4o")
    assert isinstance(keyed.openai_api_key, SecretStr)
    assert keyed.model_name == "gpt-4o" and keyed.openai_api_key.get_secret_value() == "sk-abc123"
