"""Failure categories from a Solution's trace, and the readable reasoning summary."""

from __future__ import annotations

import pytest

from agent.events import (
    AnswerExtracted,
    ErrorEvent,
    IterationCap,
    ModelCall,
    RouteDecided,
    Solution,
    ToolCall,
    ToolResult,
)
from config import load_settings
from evaluation.failures import failure_category, reasoning_summary
from evaluation.scorer import Explanation, Score


def solution(*events, question="q") -> Solution:
    return Solution.from_events(question, list(events))


def route(file_path=None, hint=None, kind="agent"):
    return RouteDecided(route=kind, reason="test", file_path=file_path, file_type="spreadsheet" if file_path else None,
                        tool_hint=hint)


def tool(name, ok=True, output="out", call_id="c1", **args):
    return [ToolCall(call_id=call_id, name=name, args=args),
            ToolResult(call_id=call_id, name=name, output=output, ok=ok, duration_s=0.1,
                       error_kind=None if ok else "exception")]


def verdict(correct: bool | None, format_only_miss: bool = False) -> Score | None:
    """A scorer's verdict (None: no ground truth), format-only miss or not."""
    if correct is None:
        return None
    return Score(correct, explanation=Explanation(correct, "string", "", "", format_only_miss))


def answer(text):
    return AnswerExtracted(answer=text, raw=f"FINAL ANSWER: {text}", method="final_answer_marker")


def test_correct_wins():
    assert failure_category(solution(route(), answer("4")), verdict(True)) == "correct"


def test_llm_error_when_the_run_failed_without_answer():
    sol = solution(route(), ErrorEvent(stage="model", message="model request failed after 6 attempts: HTTP 429"))
    assert failure_category(sol, verdict(False)) == "llm_error"
    assert failure_category(sol, verdict(None)) == "llm_error"  # test split: still an error


def test_unscored_without_ground_truth():
    assert failure_category(solution(route(), answer("x")), verdict(None)) == "unscored"


def test_format_only_miss_comes_before_other_reasons():
    sol = solution(route(), IterationCap(iterations=10), answer("4 dollars"))
    assert failure_category(sol, verdict(False, format_only_miss=True)) == "format_only_miss"


def test_iteration_cap():
    sol = solution(route(), *tool("calculator"), IterationCap(iterations=10),
                   ModelCall(iteration=11, model="m", latency_s=0.1, final=True), answer("5"))
    assert failure_category(sol, verdict(False)) == "iteration_cap"


def test_failed_tool():
    sol = solution(route(), *tool("web_search", ok=False, output="Error: no results"), answer("5"))
    assert failure_category(sol, verdict(False)) == "tool_failed"


def test_attachment_never_read_counts_as_wrong_tool(tmp_path):
    sheet = tmp_path / "a.xlsx"
    sheet.write_bytes(b"x")
    sol = solution(route(str(sheet), "parse_excel"), *tool("web_search"), answer("5"))
    assert failure_category(sol, verdict(False)) == "tool_failed"


@pytest.mark.parametrize("reader", ["parse_excel", "run_python"])
def test_any_tool_able_to_read_the_attachment_is_fine(tmp_path, reader):
    sheet = tmp_path / "a.xlsx"
    sheet.write_bytes(b"x")
    sol = solution(route(str(sheet), "parse_excel"), *tool(reader), answer("5"))
    assert failure_category(sol, verdict(False)) == "plain_wrong"


def test_no_tool_result_used():
    assert failure_category(solution(route(), answer("5")), verdict(False)) == "no_tool_result_used"


def test_rag_answer_wrong_is_plain_wrong():
    assert failure_category(solution(route(kind="rag"), answer("5")), verdict(False)) == "plain_wrong"


def test_plain_wrong():
    sol = solution(route(), *tool("calculator", expression="2+2"), answer("5"))
    assert failure_category(sol, verdict(False)) == "plain_wrong"


def test_reasoning_summary_lists_steps_final_message_and_error():
    settings = load_settings()
    sol = solution(route(), *tool("calculator", output="1031", expression="2**10+7"),
                   *tool("web_search", ok=False, output="Error: timeout", call_id="c2", query="x"),
                   answer("1031"), ErrorEvent(stage="tool", message="degraded"))
    text = reasoning_summary(sol, settings)
    assert "route: agent" in text
    assert '1. calculator(expression="2**10+7") -> ok: 1031' in text
    assert "2. web_search(" in text and "failed (exception)" in text
    assert "final message: FINAL ANSWER: 1031" in text
    assert "error: degraded" in text


def test_reasoning_summary_redacts_secrets_and_stays_short():
    settings = load_settings(OPENAI_API_KEY="sk-SECRET-123456")
    sol = solution(route(), *tool("fetch_webpage", output="key sk-SECRET-123456 " + "x" * 5000, url="http://a"),
                   answer("y" * 3000))
    text = reasoning_summary(sol, settings, limit=800)
    assert "sk-SECRET-123456" not in text and "***" in text
    assert len(text) <= 800
