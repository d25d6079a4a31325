"""The pipeline against a real llama.cpp server (SmolLM2-135M): the harness's behaviour on the wire.

The model is weak; these tests check what the harness sends and how it reads what comes back, never
whether an answer is right. Budgets are small: a calculator-only registry, short completions.
"""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from agent.events import AnswerExtracted, ModelCall, Retry
from agent.pipeline import Pipeline
from agent.prompts import CONCLUDE_REQUEST
from config import load_settings
from models import ChatModels, ModelClient
from tests.support.llama_server import RecordingProxy
from tools.compute.calculator import make_calculator_tools
from tools.core.registry import build_registry

pytestmark = pytest.mark.integration


@pytest.fixture
def proxy(llama_server):
    recorder = RecordingProxy(llama_server.port).start()
    yield recorder
    recorder.stop()


def settings_for(proxy, **overrides):
    return load_settings(**{"OPENAI_BASE_URL": proxy.url, "MODEL_NAME": "smollm2", "RAG_ENABLED": False,
                            "LLM_MAX_TOKENS": 24, "MAX_ITERATIONS": 2, "LLM_TIMEOUT": 120,
                            "RATE_LIMIT_RETRY_BASE_DELAY": 0.5, **overrides})


def pipeline(settings) -> Pipeline:
    return Pipeline(settings, registry=build_registry(settings, [("base", make_calculator_tools)]))


def test_tools_offered_with_tool_choice_usage_counted_and_an_answer_extracted(proxy) -> None:
    pipe = pipeline(settings_for(proxy))
    assert pipe.preload()["llm"] == "ready (smollm2)"
    sol = pipe.solve("What is 6 times 7?")
    assert sol.error is None, sol.error
    first = proxy.chat()[0]
    assert first.status == 200
    assert [t["function"]["name"] for t in first.body["tools"]] == ["calculator"]
    assert first.body["tool_choice"] == "auto" and first.body["max_tokens"] == 24
    served = [e.reply["usage"] for e in proxy.chat()]
    assert sol.prompt_tokens == sum(u["prompt_tokens"] for u in served) > 0
    assert sol.completion_tokens == sum(u["completion_tokens"] for u in served) > 0
    calls = [e for e in sol.events if isinstance(e, ModelCall)]
    assert [c.finish_reason for c in calls] == [e.reply["choices"][0]["finish_reason"] for e in proxy.chat()]
    extracted = next(e for e in sol.events if isinstance(e, AnswerExtracted))
    assert extracted.raw.strip() and extracted.method != "empty"


def test_a_length_cut_reply_is_flagged_and_concluded_once(proxy) -> None:
    # No tool may be called (a short tool call could end within the limit), and the numbers are asked for in
    # words: 16 tokens cannot hold them, whatever a small model makes of the request on this CPU.
    sol = pipeline(settings_for(proxy, LLM_MAX_TOKENS=16, LLM_TOOL_CHOICE="none")).solve(
        "Write every number from one to three hundred in words, one per line, and nothing else.")
    assert sol.error is None, sol.error
    wire = [e.reply["choices"][0]["finish_reason"] for e in proxy.chat()]
    assert "length" in wire
    calls = [e for e in sol.events if isinstance(e, ModelCall)]
    assert [c.truncated for c in calls] == [w == "length" for w in wire]
    conclusions = [e for e in proxy.chat() if e.body["messages"][-1].get("content") == CONCLUDE_REQUEST]
    assert len(conclusions) == 1 and "tools" not in conclusions[0].body
    assert sol.answer_truncated == (wire[-1] == "length")


def test_a_context_overflow_is_explained_and_not_retried(proxy) -> None:
    sol = pipeline(settings_for(proxy, MAX_QUESTION_CHARS=100_000)).solve("Summarise this: "
                                                                           + "lorem ipsum dolor " * 1500)
    assert len(proxy.chat()) == 1 and proxy.chat()[0].status == 400
    assert not any(isinstance(e, Retry) for e in sol.events)
    assert sol.error is not None
    assert sol.answer == "" and "context length exceeded" in sol.error
    assert "context holds 4,096" in sol.error and "about " in sol.error


def test_a_tool_call_history_is_accepted(proxy) -> None:
    # langchain sends an assistant message that only calls tools as content: null; this server answers 500.
    s = settings_for(proxy)
    history = [HumanMessage(content="What is 2+2?"),
               AIMessage(content="", tool_calls=[{"name": "calculator", "args": {"expression": "2+2"}, "id": "c1",
                                                  "type": "tool_call"}]),
               ToolMessage(content="4", tool_call_id="c1")]
    result = ModelClient(s, ChatModels(s)).request(history, tools=make_calculator_tools(s))
    assert proxy.chat()[0].status == 200 and proxy.chat()[0].body["messages"][1]["content"] == ""
    assert result.attempts == 1 and result.prompt_tokens > 0
