"""ModelClient: one chat model per name, tool_choice and max_tokens on the wire, hooks, endpoint fail-fast."""

from __future__ import annotations

import socket
import time

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from config import load_settings
from models import ChatModels, EndpointMonitor, LLMCallError, ModelClient
from models.compat import CompatibleChatOpenAI
from tests.support.openai_server import ScriptedOpenAI, say
from tools.compute.calculator import make_calculator_tools


def settings_for(url: str, **kw):
    return load_settings(**{"OPENAI_BASE_URL": url, "OPENAI_API_KEY": "sk-test", "MODEL_NAME": "scripted", **kw})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_one_chat_model_per_name_built_once() -> None:
    models = ChatModels(load_settings(OPENAI_API_KEY="sk-test", VISION_MODEL_NAME="vision-x"))
    assert models.get() is models.get("gpt-4o-mini")
    assert models.get("vision-x") is models.get("vision-x") is not models.get()
    tools = make_calculator_tools(load_settings())
    assert models.with_tools(tools) is models.with_tools(tools)


def test_tool_choice_and_max_tokens_are_sent_and_null_content_is_not() -> None:
    with ScriptedOpenAI([say("FINAL ANSWER: 4")]) as server:
        s = settings_for(server.url, LLM_TOOL_CHOICE="required", LLM_MAX_TOKENS=321)
        client = ModelClient(s, ChatModels(s))
        history = [HumanMessage(content="2+2?"),
                   AIMessage(content="", tool_calls=[{"name": "calculator", "args": {"expression": "2+2"},
                                                      "id": "c1", "type": "tool_call"}]),
                   ToolMessage(content="4", tool_call_id="c1")]
        client.request(history, tools=make_calculator_tools(s))
    body = server.requests[0].body
    assert body["tool_choice"] == "required" and [t["function"]["name"] for t in body["tools"]] == ["calculator"]
    assert body["max_tokens"] == 321 and "max_completion_tokens" not in body  # local servers ignore the latter
    assert body["messages"][1]["content"] == ""  # not null: llama-cpp-python answers null with a 500


def test_openai_itself_gets_max_completion_tokens() -> None:
    model = ChatModels(load_settings(OPENAI_API_KEY="sk-test", LLM_MAX_TOKENS=99)).get()
    assert isinstance(model, CompatibleChatOpenAI)
    payload = model._get_request_payload([HumanMessage(content="hi")])
    assert payload["max_completion_tokens"] == 99 and "max_tokens" not in payload


def test_invoke_reports_through_the_hook_with_its_purpose_and_model() -> None:
    seen = []
    with ScriptedOpenAI([say("a cat", prompt_tokens=30, completion_tokens=3)]) as server:
        s = settings_for(server.url, VISION_MODEL_NAME="vision-x")
        client = ModelClient(s, ChatModels(s), on_call=lambda result, purpose: seen.append((result, purpose)))
        result = client.invoke([HumanMessage(content="what is it?")], purpose="vision", model_name=s.vision_model)
    assert server.requests[0].body["model"] == "vision-x"
    assert seen == [(result, "vision")] and (result.prompt_tokens, result.completion_tokens) == (30, 3)
    assert result.finish_reason == "stop" and not result.truncated


def test_probe_names_the_url_when_nothing_listens() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    monitor = EndpointMonitor(load_settings(OPENAI_BASE_URL=url))
    state = monitor.probe()
    assert state.unreachable and state.detail == f"unreachable ({url}: connection refused)"


def test_probe_checks_the_model_is_served() -> None:
    with ScriptedOpenAI() as server:
        url = server.url
        assert EndpointMonitor(settings_for(url)).probe().detail == "ready (scripted)"
        wrong = EndpointMonitor(settings_for(url, MODEL_NAME="llama-9000")).probe()
    assert wrong.verdict == "not_served" and wrong.detail.startswith(f"model llama-9000 not served by {url}")


def test_requests_fail_at_once_while_unreachable_and_resume_when_the_server_comes_up() -> None:
    port = free_port()
    s = load_settings(OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1", MODEL_NAME="scripted", RATE_LIMIT_RETRY_MAX=5)
    monitor = EndpointMonitor(s, recheck_after=0.3)
    monitor.probe()
    waits: list[float] = []
    client = ModelClient(s, ChatModels(s), endpoint=monitor, sleep=waits.append)
    with pytest.raises(LLMCallError, match=f"127.0.0.1:{port}/v1: connection refused"):
        client.request([HumanMessage(content="hi")])
    assert waits == []  # at once: no retry waits while the endpoint is known to be down
    server = ScriptedOpenAI([say("up")])
    server.start(port)
    try:
        time.sleep(0.35)
        assert client.request([HumanMessage(content="hi")]).message.content == "up"
    finally:
        server.stop()


def test_a_request_that_finds_the_endpoint_gone_marks_it(monkeypatch) -> None:
    # A port bound but not listening refuses connections, and no other xdist worker's server can take it meanwhile.
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        port = holder.getsockname()[1]
        s = load_settings(OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1", RATE_LIMIT_RETRY_MAX=5)
        monitor = EndpointMonitor(s)
        client = ModelClient(s, ChatModels(s), endpoint=monitor, sleep=lambda _: None)
        with pytest.raises(LLMCallError, match="after 2 attempts.*connection refused"):
            client.request([HumanMessage(content="hi")])
    assert monitor.state is not None and monitor.state.unreachable


def test_a_slow_endpoint_is_not_declared_dead() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)  # accepts the connection but never answers: a server busy generating
    try:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        state = EndpointMonitor(load_settings(OPENAI_BASE_URL=url, MODEL_NAME="m"), timeout=0.3).probe()
    finally:
        listener.close()
    assert not state.unreachable and "did not list its models within 0.3s" in state.detail
