"""Failure classification by meaning, and the retry policy that follows from it."""

from __future__ import annotations

import socket
import ssl

import httpx2
import openai
import pytest

from config import load_settings
from models.client import LLMCallError, call_model
from models.failures import QUICK_RETRY_DELAY, classify_failure, context_overflow_reason, next_delay
from tests.support.fake_model import ScriptedChatModel, ai

URL = "http://127.0.0.1:9/v1/chat/completions"
REQ = httpx2.Request("POST", URL)


def status_error(status: int, body: str = "boom") -> openai.APIStatusError:
    response = httpx2.Response(status, text=body, request=REQ)
    cls = (openai.InternalServerError if status >= 500
           else openai.BadRequestError if status == 400 else openai.APIStatusError)
    return cls(f"Error code: {status} - {body}", response=response, body=body)


def connection_error(cause: BaseException) -> openai.APIConnectionError:
    try:
        try:
            raise cause
        except BaseException as inner:
            raise httpx2.ConnectError(str(inner)) from inner
    except httpx2.ConnectError as err:
        exc = openai.APIConnectionError(request=REQ)
        exc.__cause__ = err
        return exc


def run(script, **settings):
    model = ScriptedChatModel(script=script)
    slept: list[float] = []
    s = load_settings(**{"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "RATE_LIMIT_RETRY_MAX": 5, **settings})
    try:
        result = call_model(model, [], s, sleep=slept.append)
    except LLMCallError as exc:
        return exc, slept, len(model.calls)
    return result, slept, len(model.calls)


@pytest.mark.parametrize(("exc", "kind"), [
    (status_error(429), "rate_limited"), (status_error(503), "overloaded"), (status_error(502), "overloaded"),
    (status_error(500), "server_error"), (status_error(400), "rejected"),
    (openai.APITimeoutError(REQ), "timeout"),
    (openai.APIConnectionError(request=REQ), "connection_reset"),
    (connection_error(ConnectionRefusedError(111, "Connection refused")), "unreachable"),
    (connection_error(socket.gaierror(-2, "Name or service not known")), "unreachable"),
    (connection_error(ssl.SSLError(1, "certificate verify failed")), "unreachable"),
])
def test_kinds(exc, kind) -> None:
    assert classify_failure(exc, load_settings()).kind == kind


def test_unreachable_reasons_name_the_url_and_the_cause() -> None:
    s = load_settings(OPENAI_BASE_URL="http://10.9.9.9:8000/v1")
    refused = classify_failure(connection_error(ConnectionRefusedError(111, "Connection refused")), s)
    assert refused.reason == "http://10.9.9.9:8000/v1: connection refused"
    dns = classify_failure(connection_error(socket.gaierror(-2, "Name or service not known")), s)
    assert dns.reason.endswith("DNS lookup failed")
    tls = classify_failure(connection_error(ssl.SSLError(1, "certificate verify failed")), s)
    assert "TLS error" in tls.reason


def test_the_same_500_twice_stops_after_one_retry_with_the_servers_message() -> None:
    body = '{"error": {"message": "content: Input should be a valid string"}}'
    exc, slept, calls = run([status_error(500, body)] * 6)
    assert isinstance(exc, LLMCallError) and calls == 2 and len(slept) == 1
    assert "same error twice" in str(exc) and "Input should be a valid string" in str(exc)


def test_different_500s_keep_backing_off() -> None:
    result, slept, calls = run([status_error(500, "a"), status_error(500, "b"), ai("ok")])
    assert result.message.content == "ok" and slept == [10, 20]


def test_rate_limits_and_overload_back_off_to_the_limit() -> None:
    exc, slept, calls = run([status_error(503)] * 4, RATE_LIMIT_RETRY_MAX=3)
    assert calls == 4 and slept == [10, 20, 40] and "after 4 attempts" in str(exc)


def test_a_timeout_is_retried_once() -> None:
    exc, slept, calls = run([openai.APITimeoutError(REQ)] * 3)
    assert calls == 2 and slept == [QUICK_RETRY_DELAY] and "LLM_TIMEOUT" in str(exc)
    result, _, _ = run([openai.APITimeoutError(REQ), ai("done")])
    assert result.message.content == "done"


def test_an_unreachable_endpoint_gets_one_quick_retry() -> None:
    refused = connection_error(ConnectionRefusedError(111, "Connection refused"))
    exc, slept, calls = run([refused, refused, refused])
    assert calls == 2 and slept == [QUICK_RETRY_DELAY]
    assert str(exc).endswith("http://127.0.0.1:9/v1: connection refused") and exc.failure.kind == "unreachable"


def test_connection_resets_back_off() -> None:
    result, slept, _ = run([openai.APIConnectionError(request=REQ)] * 2 + [ai("ok")])
    assert slept == [10, 20] and result.attempts == 3


def test_every_seventh_request_failing_loses_nothing() -> None:
    script = [status_error(500) if i % 7 == 6 else ai(f"r{i}") for i in range(30)]
    model = ScriptedChatModel(script=script)
    s = load_settings(RATE_LIMIT_RETRY_BASE_DELAY=0)
    answers = [call_model(model, [], s, sleep=lambda _: None).message.content for _ in range(26)]
    assert len(answers) == 26 and all(isinstance(a, str) and a.startswith("r") for a in answers)


@pytest.mark.parametrize(("text", "asked", "limit"), [
    ("This model's maximum context length is 1024 tokens. However, you requested 1536 tokens "
     "(1531 in the messages, 5 in the completion).", "1,536", "1,024"),
    ("Requested tokens (2345) exceed context window of 2048", "2,345", "2,048"),
    ('{"error":{"code":400,"message":"the request exceeds the available context size","n_prompt_tokens":2500,'
     '"n_ctx":2048}}', "2,500", "2,048"),
])
def test_context_overflow_says_the_prompt_size_and_the_limit(text, asked, limit) -> None:
    reason = context_overflow_reason(text, 0, 400)
    assert f"about {asked} tokens" in reason and f"context holds {limit}" in reason


def test_context_overflow_is_not_retried_and_falls_back_to_the_estimate() -> None:
    exc, slept, calls = run([status_error(400, "prompt is too long for this server")])
    assert calls == 1 and slept == [] and exc.failure.kind == "context_length"
    assert "context length exceeded" in str(exc)


def test_next_delay_honours_retry_after() -> None:
    s = load_settings()
    failure = classify_failure(status_error(429), s)
    failure.retry_after_s = 2.5
    assert next_delay(failure, [], s) == 2.5
