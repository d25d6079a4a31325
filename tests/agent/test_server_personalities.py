"""The pipeline against the scripted server's personalities: what real local servers do to the loop."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from agent.events import AnswerExtracted, ModelCall, ToolCall
from agent.pipeline import Pipeline
from config import load_settings
from models import ChatModels, ModelClient, build_chat_model, call_model
from tests.support.openai_server import ScriptedOpenAI, call, cut, say, tool_results
from tools.compute.calculator import make_calculator_tools
from tools.core.registry import build_registry

pytestmark = pytest.mark.integration


def make_pipeline(srv: ScriptedOpenAI, **overrides) -> Pipeline:
    settings = load_settings(**{"OPENAI_BASE_URL": srv.url, "OPENAI_API_KEY": "sk-test", "RAG_ENABLED": False,
                                "MODEL_NAME": "scripted", "RATE_LIMIT_RETRY_BASE_DELAY": 0.01, **overrides})
    registry = build_registry(settings, [("base", make_calculator_tools)])
    return Pipeline(settings, registry=registry)


def tool_task(srv: ScriptedOpenAI):
    return make_pipeline(srv).solve("What is 2**10 + 7?")


def test_tools_survive_a_server_that_drops_them_without_tool_choice() -> None:
    script = [call("calculator", expression="2**10 + 7"), say("FINAL ANSWER: 1031")]
    with ScriptedOpenAI(script, personalities=["tools_need_choice"]) as srv:
        sol = tool_task(srv)
    assert sol.answer == "1031" and sol.tools_used == ["calculator"]
    assert srv.requests[0].body["tool_choice"] == "auto"
    step = next(e for e in sol.events if isinstance(e, ModelCall))
    assert (step.tools_offered, step.tool_choice) == (1, "auto")
    # Without tool_choice the same server hides the tools: what the harness no longer does.
    with ScriptedOpenAI([call("calculator", expression="1+1")], personalities=["tools_need_choice"]) as srv:
        s = load_settings(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="sk-test")
        bare = build_chat_model(s).bind_tools(build_registry(s, [("base", make_calculator_tools)]).tools)
        reply = call_model(bare, [HumanMessage(content="1+1?")], s).message
    assert reply.tool_calls == [] and "tool_choice" not in srv.requests[0].body


def test_a_tool_call_history_is_sent_without_null_content() -> None:
    script = [call("calculator", expression="2**10 + 7"), say("FINAL ANSWER: 1031")]
    with ScriptedOpenAI(script, personalities=["null_content_500"]) as srv:
        sol = tool_task(srv)
    assert sol.answer == "1031" and sol.retries == 0 and len(srv.requests) == 2
    assert srv.requests[1].body["messages"][2]["content"] == ""


def test_a_reply_cut_by_length_is_marked_then_concluded_once() -> None:
    script = [cut("123456 * 789 = 97406784 + 123456 * 789 = 97406784 + 123456"), say("FINAL ANSWER: 97406784")]
    with ScriptedOpenAI(script) as srv:
        sol = make_pipeline(srv).solve("What is 123456 * 789?")
    first, second = [e for e in sol.events if isinstance(e, ModelCall)]
    assert first.truncated and first.finish_reason == "length" and not second.truncated
    assert "cut off at the length limit" in srv.requests[1].body["messages"][-1]["content"]
    assert "tools" not in srv.requests[1].body  # the conclusion request offers no tools: it must answer
    assert sol.answer == "97406784" and not sol.answer_truncated


def test_an_answer_taken_from_a_cut_reply_is_flagged() -> None:
    with ScriptedOpenAI([cut("The task is"), cut("The answer is 4")]) as srv:
        sol = make_pipeline(srv).solve("q")
    assert len(srv.requests) == 2  # asked to conclude once, not again
    assert sol.answer_truncated and next(e for e in sol.events if isinstance(e, AnswerExtracted)).truncated


def test_the_servers_length_limit_follows_max_tokens() -> None:
    with ScriptedOpenAI([say("FINAL ANSWER: 6")], personalities=["length"]) as srv:
        sol = make_pipeline(srv, LLM_MAX_TOKENS=16).solve("count")
    assert srv.requests[0].body["max_tokens"] == 16 and sol.answer == "6" and not sol.answer_truncated
    with ScriptedOpenAI([say("w " * 40), say("FINAL ANSWER: w")], personalities=["length"]) as srv:
        sol = make_pipeline(srv, LLM_MAX_TOKENS=16).solve("say w forty times")
    first = next(e for e in sol.events if isinstance(e, ModelCall))
    assert first.truncated and first.content == " ".join(["w"] * 16) and sol.answer == "w"


def test_no_usage_is_said_not_hidden() -> None:
    with ScriptedOpenAI([say("FINAL ANSWER: 3")], personalities=["no_usage"]) as srv:
        sol = tool_task(srv)
    step = next(e for e in sol.events if isinstance(e, ModelCall))
    assert sol.answer == "3" and sol.total_tokens == 0 and step.usage_reported is False


def test_usage_only_in_the_final_stream_chunk_is_counted_by_a_streaming_client() -> None:
    with ScriptedOpenAI([say("FINAL ANSWER: 3", prompt_tokens=21, completion_tokens=4)] * 2,
                        personalities=["usage_in_stream_only"]) as srv:
        s = load_settings(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="sk-test", MODEL_NAME="scripted")
        plain = ModelClient(s, ChatModels(s)).request([HumanMessage(content="q")])
        streaming = build_chat_model(s).model_copy(update={"streaming": True, "stream_usage": True})
        streamed = call_model(streaming, [HumanMessage(content="q")], s)
    assert not plain.usage_reported and plain.prompt_tokens == 0
    assert srv.requests[1].body["stream"] is True
    assert (streamed.prompt_tokens, streamed.completion_tokens, streamed.usage_reported) == (21, 4, True)
    assert streamed.finish_reason == "stop"


def test_text_form_tool_calls_run_as_calls_and_never_become_the_answer() -> None:
    script = [call("calculator", expression="2**10 + 7"), say("FINAL ANSWER: 1031")]
    with ScriptedOpenAI(script, personalities=["text_tool_calls"]) as srv:
        sol = tool_task(srv)
    assert sol.answer == "1031" and sol.tools_used == ["calculator"]
    assert tool_results(srv.requests[1].body) == ["1031"]
    text_call = next(e for e in sol.events if isinstance(e, ModelCall)).tool_calls[0]
    assert text_call["name"] == "calculator" and text_call.get("text_form") is True
    assert any(isinstance(e, ToolCall) and e.name == "calculator" for e in sol.events)


def test_a_bare_json_call_at_the_step_limit_is_not_the_answer() -> None:
    with ScriptedOpenAI([call("calculator", expression="1+1"), say('{"expression": "1+1"}')],
                        personalities=["text_tool_calls"]) as srv:
        sol = make_pipeline(srv, MAX_ITERATIONS=1).solve("q")
    assert sol.hit_iteration_cap and sol.answer == ""
    assert next(e for e in sol.events if isinstance(e, AnswerExtracted)).method == "unrun_tool_call"
