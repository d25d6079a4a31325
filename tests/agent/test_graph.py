"""The LangGraph loop driven by a scripted fake chat model (no network)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx2
import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool

from agent.events import AnswerExtracted, ErrorEvent, IterationCap, ModelCall, Retry, RouteDecided, ToolCall, ToolResult
from agent.pipeline import Pipeline
from agent.prompts import GAIA_SYSTEM_PROMPT
from config import load_settings
from tests.support.fake_model import ScriptedChatModel, ai, tool_call, tool_calls
from tools.compute.calculator import make_calculator_tools
from tools.core.context import ToolContext
from tools.core.registry import ToolRegistry

seen_configs: list[list[str]] = []


@tool
def peek_attachments(note: str, config: RunnableConfig) -> str:  # noqa: D417 - config is injected by LangGraph
    """Report the attachments this run was given.

    Args:
        note: Anything.
    """
    paths = [str(p) for p in ToolContext.of(config).attachments]
    seen_configs.append(paths)
    return f"attachments: {paths}"


ECHO_SPANS: list[tuple[float, float]] = []
"""(start, end) of every slow_echo call, to see which ran at the same time."""


@tool
def slow_echo(text: str) -> str:
    """Echo text after a pause.

    Args:
        text: What to echo.
    """
    start = time.monotonic()
    time.sleep(0.5)
    ECHO_SPANS.append((start, time.monotonic()))
    return text.upper()


@tool
def explode(text: str) -> str:
    """Always fails.

    Args:
        text: Ignored.
    """
    raise RuntimeError("boom")


def registry(settings) -> ToolRegistry:
    tools = make_calculator_tools(settings) + [peek_attachments, slow_echo, explode]
    return ToolRegistry(tools=tools, tiers={"base": [t.name for t in tools]})


def run(script, **overrides):
    settings = load_settings(RAG_ENABLED=False, RATE_LIMIT_RETRY_BASE_DELAY=0.01, **overrides)
    model = ScriptedChatModel(script=script)
    pipe = Pipeline(settings, llm=model, registry=registry(settings))
    return pipe, model


def test_two_step_tool_use() -> None:
    pipe, model = run([tool_call("calculator", expression="2**10 + 7"), ai("It is 1031.\nFINAL ANSWER: 1031")])
    sol = pipe.solve("What is 2**10 + 7?")
    assert sol.answer == "1031" and sol.error is None and sol.source == "agent"
    assert sol.steps == 2 and sol.tools_used == ["calculator"]
    assert (sol.prompt_tokens, sol.completion_tokens) == (20, 10)
    kinds = [e.kind for e in sol.events]
    assert kinds == ["rag_lookup", "route", "model_call", "tool_call", "tool_result", "model_call", "answer"]
    result = next(e for e in sol.events if isinstance(e, ToolResult))
    assert result.output == "1031" and result.ok
    # the second request carries the tool's observation and the official system prompt
    second = model.calls[1]
    assert (isinstance(second[0], SystemMessage) and isinstance(second[0].content, str)
            and second[0].content.startswith(GAIA_SYSTEM_PROMPT))
    assert isinstance(second[-1], ToolMessage) and second[-1].content == "1031"
    assert model.bound_tools == ["calculator", "peek_attachments", "slow_echo", "explode"]


def test_events_are_streamed_live() -> None:
    pipe, _ = run([tool_call("slow_echo", text="a"), tool_call("slow_echo", text="b"), ai("FINAL ANSWER: B")])
    arrivals = []
    ECHO_SPANS.clear()
    for event in pipe.stream("echo"):
        arrivals.append((event.kind, time.monotonic()))
    first_call = next(t for k, t in arrivals if k == "tool_call")
    answer = next(t for k, t in arrivals if k == "answer")
    (_, first_done), (_, second_done) = ECHO_SPANS
    assert first_call < first_done and answer > second_done  # the call was streamed before the slow tools ran


def test_parallel_tool_calls_are_all_answered_in_order() -> None:
    pipe, model = run([tool_calls(("slow_echo", {"text": "x"}), ("slow_echo", {"text": "y"}),
                                  ("calculator", {"expression": "1+1"})),
                       ai("FINAL ANSWER: done")])
    ECHO_SPANS.clear()
    sol = pipe.solve("three at once")
    (start_a, end_a), (start_b, end_b) = ECHO_SPANS
    assert max(start_a, start_b) < min(end_a, end_b)  # the two slow calls overlapped: they ran concurrently
    replies = [m for m in model.calls[1] if isinstance(m, ToolMessage)]
    assert [r.content for r in replies] == ["X", "Y", "2"]
    assert len([e for e in sol.events if isinstance(e, ToolResult)]) == 3


def test_unknown_tool_lists_the_available_ones() -> None:
    pipe, model = run([tool_call("teleport", where="moon"), ai("FINAL ANSWER: none")])
    sol = pipe.solve("go")
    result = next(e for e in sol.events if isinstance(e, ToolResult))
    assert not result.ok and result.error_kind == "unknown_tool"
    assert "no tool named 'teleport'" in result.output and "calculator" in result.output
    assert sol.answer == "none"


@pytest.mark.tool_bug
def test_a_bug_in_a_tool_is_an_internal_error_the_run_survives(caplog) -> None:
    pipe, model = run([tool_call("explode", text="x"), ai("FINAL ANSWER: recovered")])
    sol = pipe.solve("try")
    result = next(e for e in sol.events if isinstance(e, ToolResult))
    assert not result.ok and result.error_kind == "internal" and "boom" in result.output
    assert result.output.startswith("Error: internal error in explode")
    assert sol.answer == "recovered" and sol.error is None
    assert "internal error in tool explode" in caplog.text and "RuntimeError: boom" in caplog.text  # traceback logged


@pytest.mark.tool_bug
def test_a_pipeline_asked_to_raise_internal_errors_ends_the_run_on_a_tool_bug() -> None:
    settings = load_settings(RAG_ENABLED=False)
    model = ScriptedChatModel(script=[tool_call("explode", text="x"), ai("FINAL ANSWER: recovered")])
    pipe = Pipeline(settings, llm=model, registry=registry(settings), raise_internal_errors=True)
    sol = pipe.solve("try")
    assert sol.answer == "" and sol.error is not None and "RuntimeError: boom" in sol.error
    assert not any(isinstance(e, ToolResult) for e in sol.events)  # no observation: the bug ended the run


@pytest.mark.tool_bug
def test_a_bug_in_a_tool_fails_its_test() -> None:
    from tools.core.executor import run_tool

    with pytest.raises(RuntimeError, match="boom"):
        run_tool(explode, {"text": "x"}, load_settings(), raise_internal_errors=True)


def test_invalid_tool_call_arguments_are_answered() -> None:
    bad = AIMessage(content="", invalid_tool_calls=[{"name": "calculator", "args": "{not json", "id": "bad1",
                                                      "error": "JSONDecodeError", "type": "invalid_tool_call"}])
    pipe, model = run([bad, ai("FINAL ANSWER: 3")])
    sol = pipe.solve("q")
    reply = [m for m in model.calls[1] if isinstance(m, ToolMessage)]
    assert len(reply) == 1 and reply[0].tool_call_id == "bad1" and "not valid JSON" in reply[0].content
    assert sol.answer == "3"


def test_attachments_reach_tools_through_config(tmp_path: Path) -> None:
    attachment = tmp_path / "data.csv"
    attachment.write_text("a,b\n1,2\n")
    seen_configs.clear()
    pipe, model = run([tool_call("peek_attachments", note="?"), ai("FINAL ANSWER: ok")])
    sol = pipe.solve("read it", file_path=str(attachment))
    assert seen_configs == [[str(attachment.resolve())]]
    route = next(e for e in sol.events if isinstance(e, RouteDecided))
    assert route.file_type == "csv" and route.file_path == str(attachment.resolve())
    task = model.calls[0][-1]
    assert isinstance(task, HumanMessage) and str(attachment.resolve()) in task.content


def test_iteration_cap_forces_a_best_effort_answer() -> None:
    script = [tool_call("calculator", expression=f"{i}+1") for i in range(3)]
    script.append(ai("Best guess.\nFINAL ANSWER: 4"))
    pipe, model = run(script, MAX_ITERATIONS=3)
    sol = pipe.solve("loop forever")
    assert sol.hit_iteration_cap and sol.answer == "4" and sol.steps == 3
    kinds = [e.kind for e in sol.events]
    assert kinds.count("tool_call") == 2  # the third turn's call is cut by the cap
    assert kinds[-3:] == ["iteration_cap", "model_call", "answer"]
    final_call = [e for e in sol.events if isinstance(e, ModelCall)][-1]
    assert final_call.final
    last_request = model.calls[-1]
    assert "step limit" in last_request[-1].content
    # the unanswered tool call of the capped turn is not sent back (the API would reject it)
    assert not any(isinstance(m, AIMessage) and m.tool_calls for m in last_request[-2:])


def _rate_limit_error(retry_after: str | None) -> openai.RateLimitError:
    headers = {"retry-after": retry_after} if retry_after else {}
    response = httpx2.Response(429, headers=headers, request=httpx2.Request("POST", "http://x/v1/chat/completions"))
    return openai.RateLimitError("Rate limit reached", response=response, body=None)


def test_retry_then_success_is_traced() -> None:
    pipe, model = run([_rate_limit_error("0.05"), ai("FINAL ANSWER: fine")])
    sol = pipe.solve("q")
    retry = next(e for e in sol.events if isinstance(e, Retry))
    assert retry.status_code == 429 and retry.retry_after_s == 0.05 and retry.delay_s == 0.05
    assert sol.answer == "fine" and sol.retries == 1 and sol.error is None


def test_model_failure_ends_with_error_and_empty_answer() -> None:
    pipe, model = run([_rate_limit_error(None)] * 3, RATE_LIMIT_RETRY_MAX=2)
    sol = pipe.solve("q")
    assert sol.answer == "" and sol.retries == 2
    error = sol.events[-1]
    assert isinstance(error, ErrorEvent) and error.stage == "model" and "after 3 attempts" in error.message


def test_unexpected_model_exception_does_not_escape() -> None:
    pipe, model = run([ValueError("weird")])
    sol = pipe.solve("q")
    assert sol.answer == "" and sol.error and "weird" in sol.error


def test_history_is_sent_before_the_question() -> None:
    pipe, model = run([ai("FINAL ANSWER: Paris")])
    pipe.solve("And its capital?", history=[{"role": "user", "content": "Tell me about France"},
                                             {"role": "assistant", "content": "France is a country."},
                                             {"role": "system", "content": "ignored"}])
    sent = model.calls[0]
    assert [type(m).__name__ for m in sent] == ["SystemMessage", "HumanMessage", "AIMessage", "HumanMessage"]
    assert sent[-1].content.startswith("And its capital?")


def test_empty_question_is_an_error_not_a_crash() -> None:
    pipe, model = run([])
    sol = pipe.solve("   ")
    assert sol.answer == "" and "empty" in sol.error and model.calls == []


def test_concurrent_runs_share_one_pipeline() -> None:
    def reply(messages):
        question = next(m.content for m in messages if isinstance(m, HumanMessage))
        return ai(f"FINAL ANSWER: {question.split()[0]}")

    pipe, _ = run([reply] * 8)
    answers: dict[str, str] = {}

    def worker(word: str) -> None:
        answers[word] = pipe.solve(f"{word} please").answer

    threads = [threading.Thread(target=worker, args=(w,)) for w in "abcdefgh"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert answers == {w: w for w in "abcdefgh"}


def test_answer_event_is_last_and_method_recorded() -> None:
    pipe, _ = run([ai("Answer: 12")])
    events = list(pipe.stream("q"))
    assert isinstance(events[-1], AnswerExtracted) and events[-1].method == "answer_label"
    assert all(not isinstance(e, IterationCap) for e in events)
    assert not any(isinstance(e, ToolCall) for e in events)


def test_abandoned_stream_stops_the_run() -> None:
    pipe, model = run([tool_call("slow_echo", text="a"), ai("FINAL ANSWER: never asked")])
    events = pipe.stream("q")
    for event in events:
        if isinstance(event, ToolCall):
            break
    events.close()  # the UI went away while the tool runs
    time.sleep(0.9)  # longer than the tool
    assert len(model.calls) == 1  # the second model call was never made


def test_stream_is_lazy_until_iterated() -> None:
    pipe, model = run([ai("FINAL ANSWER: 1")])
    events = pipe.stream("q")
    time.sleep(0.05)
    assert model.calls == []
    assert [e.kind for e in events][-1] == "answer"


def test_chat_ui_trace_steps_in_history_are_skipped() -> None:
    pipe, model = run([ai("FINAL ANSWER: ok")])
    pipe.solve("next", history=[{"role": "user", "content": "first"},
                                {"role": "assistant", "content": "calculator(2+2)",
                                 "metadata": {"title": "🛠 calculator"}},
                                {"role": "assistant", "content": [{"type": "text", "text": "4"}]}])
    assert [m.content for m in model.calls[0][1:-1]] == ["first", "4"]


def test_module_level_entry_points_answer_on_an_application_of_their_own(monkeypatch) -> None:
    """`agent.solve` / `agent.stream` read the settings at the call (an entry point) and keep no pipeline."""
    import agent
    import agent.pipeline as pipeline_module
    from tests.support.openai_server import ScriptedOpenAI, say

    with ScriptedOpenAI([say("FINAL ANSWER: solved"), say("FINAL ANSWER: streamed")]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("RAG_ENABLED", "false")
        assert agent.solve("q").answer == "solved"
        last = list(agent.stream("q"))[-1]
    assert isinstance(last, AnswerExtracted) and last.answer == "streamed"
    assert not hasattr(pipeline_module, "default_pipeline")
