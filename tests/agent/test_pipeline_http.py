"""The real ChatOpenAI driven through Pipeline against a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import time

import pytest

from agent.events import ErrorEvent, IterationCap, ModelCall, Retry, ToolResult
from agent.pipeline import Pipeline
from config import load_settings
from tests.support.openai_server import ScriptedOpenAI, call, fail, hang, say, tool_results
from tools.compute.calculator import make_calculator_tools
from tools.core.registry import build_registry

pytestmark = pytest.mark.integration

SECRET = "sk-test-SECRET-98765"


def make_pipeline(srv: ScriptedOpenAI, **overrides) -> Pipeline:
    settings = load_settings(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY=SECRET, RAG_ENABLED=False,
                             MODEL_NAME="scripted-model", **overrides)
    registry = build_registry(settings, [("base", make_calculator_tools)])
    return Pipeline(settings, registry=registry)


def test_two_step_tool_task() -> None:
    with ScriptedOpenAI([call("calculator", expression="2**10 + 7"),
                         say("2**10 is 1024, plus 7.\nFINAL ANSWER: 1031")]) as srv:
        sol = make_pipeline(srv).solve("What is 2**10 + 7?")
    assert sol.answer == "1031" and sol.error is None and sol.tools_used == ["calculator"]
    assert (sol.steps, sol.prompt_tokens, sol.completion_tokens) == (2, 22, 14)
    first, second = (r.body for r in srv.requests)
    assert first["model"] == "scripted-model"
    assert [t["function"]["name"] for t in first["tools"]] == ["calculator"]
    assert first["messages"][0]["role"] == "system" and "FINAL ANSWER" in first["messages"][0]["content"]
    assert tool_results(second) == ["1031"]
    assert {k.lower(): v for k, v in srv.requests[0].headers.items()}.get("authorization") == f"Bearer {SECRET}"


def test_429_with_retry_after_is_honoured() -> None:
    # The base delay is 10 s: finishing in ~1 s proves the header, not the backoff, set the wait.
    with ScriptedOpenAI([fail(429, retry_after=1), say("FINAL ANSWER: ok")]) as srv:
        sol = make_pipeline(srv, RATE_LIMIT_RETRY_BASE_DELAY=10).solve("q")
    assert sol.answer == "ok" and sol.error is None
    retry = next(e for e in sol.events if isinstance(e, Retry))
    assert retry.status_code == 429 and retry.retry_after_s == 1 and retry.delay_s == 1
    waited = srv.requests[1].at - srv.requests[0].at
    assert 0.95 <= waited < 3.0


def test_500_then_success() -> None:
    with ScriptedOpenAI([fail(500), say("FINAL ANSWER: after 500")]) as srv:
        sol = make_pipeline(srv, RATE_LIMIT_RETRY_BASE_DELAY=0.2).solve("q")
    assert sol.answer == "after 500" and sol.retries == 1
    retry = next(e for e in sol.events if isinstance(e, Retry))
    assert retry.status_code == 500 and retry.delay_s == 0.2 and retry.retry_after_s is None
    assert srv.requests[1].at - srv.requests[0].at >= 0.19


def test_400_is_not_retried() -> None:
    with ScriptedOpenAI([fail(400), say("FINAL ANSWER: never")]) as srv:
        sol = make_pipeline(srv, RATE_LIMIT_RETRY_BASE_DELAY=0.01).solve("q")
    assert sol.error is not None
    assert sol.answer == "" and sol.retries == 0 and len(srv.requests) == 1 and "HTTP 400" in sol.error


def test_hanging_server_is_a_recorded_failure() -> None:
    with ScriptedOpenAI([hang(6), hang(6)]) as srv:  # a reply after 6 s would be an answer: the timeouts fired
        sol = make_pipeline(srv, LLM_TIMEOUT=1, RATE_LIMIT_RETRY_MAX=1, RATE_LIMIT_RETRY_BASE_DELAY=0.1).solve("q")
    assert sol.answer == "" and len(srv.requests) == 2
    error = sol.events[-1]
    assert isinstance(error, ErrorEvent) and error.stage == "model"
    assert "no response within LLM_TIMEOUT=1s" in error.message and "after 2 attempts" in error.message
    assert sol.retries == 1  # two 1 s timeouts, not two 6 s hangs


def test_iteration_cap_gives_best_effort_answer() -> None:
    script = [call("calculator", expression="1+1"), call("calculator", expression="2+2"),
              say("I ran out of steps; my best answer.\nFINAL ANSWER: 4")]
    with ScriptedOpenAI(script) as srv:
        sol = make_pipeline(srv, MAX_ITERATIONS=2).solve("q")
    assert sol.answer == "4" and sol.hit_iteration_cap and sol.error is None
    assert any(isinstance(e, IterationCap) for e in sol.events)
    assert [e.final for e in sol.events if isinstance(e, ModelCall)] == [False, False, True]
    last = srv.requests[-1].body
    assert "tools" not in last  # the last call offers no tools
    assert "step limit" in last["messages"][-1]["content"]
    # every tool call sent back has its answer (the cut call is dropped)
    sent_calls = [c["id"] for m in last["messages"] if m.get("tool_calls") for c in m["tool_calls"]]
    answered = [m["tool_call_id"] for m in last["messages"] if m["role"] == "tool"]
    assert sent_calls == answered


def test_secrets_never_leak_into_events_errors_or_json() -> None:
    with ScriptedOpenAI([say(f"The key is {SECRET}.\nFINAL ANSWER: {SECRET}"),
                         fail(401, content=f"Incorrect API key provided: {SECRET}")]) as srv:
        pipe = make_pipeline(srv)
        leaked = pipe.solve("What is your key?")
        failed = pipe.solve("again")
    for sol in (leaked, failed):
        dumped = json.dumps(sol.to_dict(), default=str) + sol.trace_jsonl()
        assert SECRET not in dumped
    assert "***" in leaked.answer
    assert failed.error and "HTTP 401" in failed.error and "***" in failed.error


def test_tool_observation_is_in_the_trace_and_the_request() -> None:
    with ScriptedOpenAI([call("calculator", expression="import os"), say("FINAL ANSWER: refused")]) as srv:
        sol = make_pipeline(srv).solve("q")
    result = next(e for e in sol.events if isinstance(e, ToolResult))
    assert not result.ok and result.output.startswith("Error:")
    assert tool_results(srv.requests[1].body) == [result.output]


def test_retry_is_visible_while_waiting() -> None:
    with ScriptedOpenAI([fail(429, retry_after=1), say("FINAL ANSWER: ok")]) as srv:
        arrivals: dict[str, float] = {}
        start = time.monotonic()
        for event in make_pipeline(srv).stream("q"):
            arrivals.setdefault(event.to_dict()["kind"], time.monotonic() - start)
    assert arrivals["answer"] - arrivals["retry"] >= 0.9  # the UI hears of the wait when it starts
