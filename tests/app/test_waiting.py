"""What a live trace says it is waiting for, and the Stop note of a chat turn."""

from __future__ import annotations

import time

import gradio as gr

from agent.events import AnswerExtracted, ModelCall, Retry, RouteDecided, ToolCall, ToolResult
from ui.chat import STOP_NOTE, with_stop_note
from ui.waiting import Ticker, awaited, call_with_notes, waiting_message


def _wait(events):
    return awaited(events, "qwen3", llm_timeout=120, tool_timeout=30)


def test_each_stage_names_what_comes_next():
    assert "knowledge-base lookup" in _wait([]).what
    route = RouteDecided(route="agent", reason="x")
    assert _wait([route]).what == "the model `qwen3` to reply" and "120 s" in _wait([route]).limit
    call = ToolCall(call_id="c1", name="web_search", args={})
    assert _wait([route, call]).what == "the tool `web_search`" and "30 s" in _wait([route, call]).limit
    done = ToolResult(call_id="c1", name="web_search", output="r", ok=True, duration_s=1.0)
    assert "model" in _wait([route, call, done]).what
    retry = Retry(attempt=2, max_retries=5, delay_s=10, reason="HTTP 429")
    assert "retry 2/5" in _wait([route, retry]).what and "HTTP 429" in _wait([route, retry]).what
    model = ModelCall(iteration=1, model="qwen3", latency_s=1.0)
    assert _wait([route, model, AnswerExtracted(answer="4", raw="4", method="last_line")]) is None


def test_the_bubble_says_how_long_so_far_and_is_pending():
    message = waiting_message(_wait([]), 75)
    assert message.metadata["status"] == "pending" and "Waiting for the route" in message.metadata["title"]
    assert "1m 15s so far" in str(message.content)
    ticker = Ticker("m", 1, 1)
    ticker.since -= 3
    assert "3s so far" in str(ticker.note([])[0].content)


def test_call_with_notes_reports_while_it_waits_then_gives_the_result():
    items = list(call_with_notes(lambda: time.sleep(0.35) or "done", lambda s: f"{s:.1f}", tick_s=0.1))
    assert items[-1] == "done" and len(items) >= 3 and all(isinstance(i, str) for i in items)


def test_the_stop_note_replaces_the_waiting_bubble():
    shown = [{"role": "user", "content": "q"},
             {"role": "assistant", "content": "Waiting 3s so far", "metadata": {"title": "⏳ x", "status": "pending"}},
             gr.ChatMessage(role="assistant", content="step", metadata={"title": "Route", "status": "done"})]
    after = with_stop_note(shown)
    assert after[-1] is STOP_NOTE and len(after) == 3 and all("Waiting" not in str(m) for m in after[:-1])
