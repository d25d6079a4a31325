"""Trace events → collapsible chat messages."""

from __future__ import annotations

from pathlib import Path

from agent.events import (
    AnswerExtracted,
    ErrorEvent,
    IterationCap,
    ModelCall,
    RagLookup,
    Retry,
    RouteDecided,
    ToolCall,
    ToolResult,
)
from ui.trace_view import clip, render_trace, verdict_message


def _titles(messages):
    return [m.metadata.get("title", "") for m in messages]


def test_route_rag_and_model_call_are_collapsed_steps():
    msgs = render_trace([
        RouteDecided(route="agent", reason="no RAG hit", file_path="/x/a.xlsx", file_type="spreadsheet",
                     tool_hint="parse_excel"),
        RagLookup(tier="hints", similarity=0.61234, matched_question="Q?", note="below threshold", duration_s=0.05),
        ModelCall(iteration=1, model="m", latency_s=1.234, prompt_tokens=120, completion_tokens=9, content="thinking",
                  tool_calls=[{"name": "calculator", "args": {}}]),
    ])
    titles = _titles(msgs)
    assert titles[0] == "🧭 Route: agent" and "parse_excel" in msgs[0].content
    assert titles[1] == "📚 RAG lookup: hints (similarity 0.612)"
    assert titles[2] == "🤖 model call #1 · 120+9 tokens"
    assert msgs[2].metadata["duration"] == 1.23 and "`calculator`" in msgs[2].content
    assert all(m.metadata["status"] == "done" for m in msgs)


def test_tool_call_is_pending_until_its_result_arrives():
    call = ToolCall(call_id="c1", name="calculator", args={"expression": "2+2"})
    pending = render_trace([call])
    assert pending[0].metadata["status"] == "pending" and "2+2" in pending[0].content
    done = render_trace([call, ToolResult(call_id="c1", name="calculator", output="4", ok=True, duration_s=0.01)])
    assert len(done) == 1
    assert done[0].metadata == {"title": "✅ calculator", "status": "done", "duration": 0.01}
    assert "4" in done[0].content


def test_failed_tool_and_orphan_result():
    msgs = render_trace([ToolResult(call_id="zz", name="read_file", output="Error: file not found", ok=False,
                                    duration_s=0.2, error_kind="missing_file", truncated_chars=5)])
    assert msgs[0].metadata["title"] == "❌ read_file"
    assert "missing_file" in msgs[0].content and "5 characters were cut" in msgs[0].content


def test_parallel_tool_calls_pair_by_id():
    msgs = render_trace([
        ToolCall(call_id="a", name="web_search", args={"query": "x"}),
        ToolCall(call_id="b", name="calculator", args={"expression": "1"}),
        ToolResult(call_id="b", name="calculator", output="1", ok=True, duration_s=0.1),
    ])
    assert [m.metadata["status"] for m in msgs] == ["pending", "done"]
    assert msgs[1].metadata["title"] == "✅ calculator"


def test_answer_error_retry_cap():
    msgs = render_trace([
        Retry(attempt=1, max_retries=5, delay_s=2.0, reason="429 Too Many Requests", status_code=429, retry_after_s=2),
        IterationCap(iterations=10),
        AnswerExtracted(answer="Paris", raw="I think...\nFINAL ANSWER: Paris", method="final_answer_marker"),
        ErrorEvent(stage="llm", message="gave up"),
    ])
    titles = _titles(msgs)
    assert titles[0] == "⏳ Retry 1/5 HTTP 429" and "Retry-After 2s" in msgs[0].content
    assert titles[1].startswith("⚠️ Iteration cap reached (10)")
    assert titles[2] == "📝 Final message (extracted by: final_answer_marker)"
    assert msgs[3].content == "**Final answer:** Paris" and not msgs[3].metadata
    assert "gave up" in msgs[4].content


def test_chat_answer_has_no_prefix():
    msgs = render_trace([AnswerExtracted(answer="42", raw="42", method="last_line")], answer_prefix="")
    assert msgs[-1].content == "42"


def test_helper_model_call_is_labelled():
    msgs = render_trace([ModelCall(iteration=0, model="rag-hints", latency_s=0.1, purpose="rag_hint")])
    assert "helper model call (rag_hint)" in msgs[0].metadata["title"]


def test_backticks_in_tool_output_do_not_break_the_fence():
    call = ToolCall(call_id="c", name="read_file", args={"path": "/a.md"})
    res = ToolResult(call_id="c", name="read_file", output="```python\nprint(1)\n```", ok=True, duration_s=0)
    content = render_trace([call, res])[0].content
    assert "````\n```python" in content


def test_clip_marks_what_was_cut():
    assert clip("abc", 5) == "abc"
    assert clip("x" * 10, 4).startswith("xxxx\n… [6 more characters")


def test_verdict_message():
    from evaluation.scorer import Score, lenient_scorer, official_scorer

    good = verdict_message(official_scorer("4", "4"), "4")
    assert good.content.startswith("✅ **Correct**") and "scorer: official" in good.content
    bad = verdict_message(official_scorer("b, a", "a, b"), "a, b")
    assert "expected: **a, b**" in bad.content and "format-only miss" in bad.content and "list order" in bad.content
    lenient = verdict_message(lenient_scorer("b, a", "a, b"), "a, b")
    assert lenient.content.startswith("✅ **Correct**") and "scorer: lenient" in lenient.content
    judged = verdict_message(Score(False, "llm-judge", note="another city"), "Paris")
    assert "scorer: llm-judge" in judged.content and "another city" in judged.content


def test_write_trace_prunes_old_files(tmp_path):
    import os
    import time

    from agent.events import Solution
    from ui.debug import TRACE_TTL_S, write_trace

    stale = tmp_path / "trace-old-00000000.jsonl"
    stale.write_text("{}\n")
    os.utime(stale, (time.time() - TRACE_TTL_S - 10,) * 2)
    sol = Solution.from_events("q", [AnswerExtracted(answer="4", raw="4", method="last_line")], task_id="t1")
    path = write_trace(sol, tmp_path)
    assert not stale.exists() and '"answer": "4"' in Path(path).read_text() and "trace-t1-" in path


def test_the_answer_check_says_what_changed_and_why():
    from agent.events import AnswerCheck
    from ui.trace_view import render_event

    fixed = render_event(AnswerCheck(before="$1,234", after="1234", accepted=True, reason="form only: separators"))
    assert len(fixed) == 1 and "$1,234" in fixed[0].metadata["title"] and "1234" in fixed[0].metadata["title"]
    assert "Accepted" in fixed[0].content
    kept = render_event(AnswerCheck(before="1234", after="1243", accepted=False, reason="changes a fact: 1243"))
    assert kept[0].metadata["title"] == "🔎 Answer check: draft kept"
    assert "Rejected" in kept[0].content and "1243" in kept[0].content
