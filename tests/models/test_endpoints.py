"""An endpoint per role: vision may have its own base URL and key (empty = the agent's).

Each endpoint has its own monitor, so a dead vision endpoint never fails the agent's requests; the vision
key is a redacted secret.
"""

from __future__ import annotations

import socket

import pytest
from langchain_core.messages import HumanMessage

from agent.pipeline import Pipeline
from config import Settings, load_settings, redact
from models import (
    CallResult,
    ChatModels,
    EndpointMonitor,
    LLMCallError,
    ModelClient,
    endpoint_for,
    separate_vision_endpoint,
)
from tests.support.openai_server import ScriptedOpenAI, say


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_vision_endpoint_defaults_to_the_agents() -> None:
    s = load_settings(OPENAI_BASE_URL="http://127.0.0.1:1/v1/", OPENAI_API_KEY="sk-agent")
    assert endpoint_for(s, "vision") == endpoint_for(s, "agent")
    assert endpoint_for(s, "agent").base_url == "http://127.0.0.1:1/v1" and not separate_vision_endpoint(s)
    own_url = load_settings(OPENAI_BASE_URL="http://127.0.0.1:1/v1", OPENAI_API_KEY="sk-agent",
                            VISION_BASE_URL="http://127.0.0.1:2/v1")
    vision = endpoint_for(own_url, "vision")
    assert (vision.base_url, vision.key) == ("http://127.0.0.1:2/v1", "sk-agent") and separate_vision_endpoint(own_url)
    own_key = load_settings(OPENAI_API_KEY="sk-agent", VISION_API_KEY="sk-vision")
    assert endpoint_for(own_key, "vision").key == "sk-vision" and endpoint_for(own_key, "vision").base_url == ""
    assert endpoint_for(load_settings(OPENAI_API_KEY="sk-agent", VISION_API_KEY=""), "vision").key == "sk-agent"


def test_the_vision_key_is_a_secret_that_never_shows() -> None:
    assert "VISION_API_KEY" in Settings.secret_fields()
    s = load_settings(VISION_API_KEY="sk-vision-secret")
    assert "sk-vision-secret" not in repr(s)
    assert redact("header: Bearer sk-vision-secret", s) == "header: Bearer ***"


def test_each_role_reaches_its_own_endpoint_with_its_own_key() -> None:
    with ScriptedOpenAI([say("agent says hi")]) as agent, ScriptedOpenAI([say("a cat")]) as vision:
        s = load_settings(OPENAI_BASE_URL=agent.url, OPENAI_API_KEY="sk-agent", MODEL_NAME="text-model",
                          VISION_BASE_URL=vision.url, VISION_API_KEY="sk-vision", VISION_MODEL_NAME="vision-x")
        client = ModelClient(s, ChatModels(s))
        seen = client.invoke([HumanMessage(content="what is it?")], role="vision", purpose="vision",
                             model_name=s.vision_model)
        said = client.request([HumanMessage(content="hello")])
    assert message(seen) == "a cat" and message(said) == "agent says hi"
    assert [r.body["model"] for r in vision.requests] == ["vision-x"]
    assert [r.body["model"] for r in agent.requests] == ["text-model"]
    assert vision.requests[0].headers.get("authorization") == "Bearer sk-vision"
    assert agent.requests[0].headers.get("authorization") == "Bearer sk-agent"


def message(result: CallResult) -> str:
    return str(result.message.content)


def test_a_dead_vision_endpoint_never_marks_the_agent_endpoint_dead() -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"
    with ScriptedOpenAI([say("still here")]) as agent:
        s = load_settings(OPENAI_BASE_URL=agent.url, OPENAI_API_KEY="sk-agent", MODEL_NAME="scripted",
                          VISION_BASE_URL=dead, RATE_LIMIT_RETRY_MAX=1)
        agent_monitor, vision_monitor = EndpointMonitor(s), EndpointMonitor(s, role="vision")
        client = ModelClient(s, ChatModels(s), endpoint=agent_monitor, vision_endpoint=vision_monitor,
                             sleep=lambda _: None)
        with pytest.raises(LLMCallError, match="connection refused"):
            client.invoke([HumanMessage(content="what is it?")], role="vision", purpose="vision")
        assert vision_monitor.state is not None and vision_monitor.state.unreachable
        assert agent_monitor.state is None  # never touched by the vision failure
        assert message(client.request([HumanMessage(content="hi")])) == "still here"
        with pytest.raises(LLMCallError, match=f"{dead}: connection refused"):  # fails fast while it is dead
            client.invoke([HumanMessage(content="again?")], role="vision", purpose="vision")


def test_a_shared_endpoint_has_one_monitor_for_both_roles() -> None:
    port = free_port()
    s = load_settings(OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1", MODEL_NAME="scripted", RATE_LIMIT_RETRY_MAX=1)
    monitor = EndpointMonitor(s)
    client = ModelClient(s, ChatModels(s), endpoint=monitor, sleep=lambda _: None)
    assert client.monitor("vision") is client.monitor("agent") is monitor
    with pytest.raises(LLMCallError):
        client.invoke([HumanMessage(content="what is it?")], role="vision", purpose="vision")
    assert monitor.state is not None and monitor.state.unreachable  # the same server is down for both


def test_the_pipeline_checks_and_shows_both_endpoints_when_they_differ() -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"
    with ScriptedOpenAI() as agent:
        both = load_settings(OPENAI_BASE_URL=agent.url, OPENAI_API_KEY="sk-agent", MODEL_NAME="scripted",
                             VISION_BASE_URL=dead, VISION_MODEL_NAME="vision-x", RAG_ENABLED=False)
        status = Pipeline(both).preload()
        shared = Pipeline(load_settings(OPENAI_BASE_URL=agent.url, MODEL_NAME="scripted", RAG_ENABLED=False)).preload()
    assert status["llm"] == "ready (scripted)"
    assert status["vision"] == f"unreachable ({dead}: connection refused) (own endpoint)"
    assert "vision" not in shared
