"""The Debug tab's rendering of a team run (pure): ledger, worker sections, progress checks, the delegate steps."""

from __future__ import annotations

from agent.events import AnswerExtracted, Event, LedgerMade, ProgressChecked, ToolCall, ToolResult, WorkerReported
from ui.trace_view import render_trace


def _worker(delegation: str, value: str) -> list[Event]:
    tag = {"worker": "coder", "delegation": delegation}
    call = ToolCall(elapsed_s=0.2, call_id=f"c-{delegation}", name="calculator", args={"expression": value})
    result = ToolResult(elapsed_s=0.3, call_id=f"c-{delegation}", name="calculator", output=value, ok=True,
                        duration_s=0.1)
    report = WorkerReported(elapsed_s=0.4, task=f"Compute {value}", report=f"It is {value}.", steps=2,
                            prompt_tokens=30, completion_tokens=6, duration_s=0.25)
    for event in (call, result, report):
        event.worker, event.delegation = tag["worker"], tag["delegation"]
    return [call, result, report]


def _team_trace(*, finished: bool) -> list[Event]:
    events: list[Event] = [LedgerMade(elapsed_s=0.1, facts="FACTS GIVEN: two sums", plan="1. coder")]
    for delegation in ("d1", "d2"):
        events.append(ToolCall(elapsed_s=0.1, call_id=delegation, name="delegate",
                               args={"worker": "coder", "task": f"Compute {delegation}"}))
    events += _worker("d1", "1024") + _worker("d2", "34")
    if finished:
        events += [ToolResult(elapsed_s=0.5, call_id=d, name="delegate", output="ok", ok=True, duration_s=0.4)
                   for d in ("d1", "d2")]
        events += [ProgressChecked(elapsed_s=0.6, satisfied=True, looping=False, progress=True, round=1),
                   AnswerExtracted(elapsed_s=0.7, answer="1058", raw="FINAL ANSWER: 1058",
                                   method="final_answer_marker")]
    return events


def _titles(events: list[Event]) -> list[str]:
    return [str((m.metadata or {}).get("title") or "") for m in render_trace(events)]


def test_each_delegation_is_a_section_whose_steps_are_its_children():
    messages = render_trace(_team_trace(finished=True))
    sections = [m for m in messages if str((m.metadata or {}).get("title", "")).startswith("👷")]
    assert [m.metadata["title"] for m in sections] == ["👷 coder · 2 step(s) · 36 tokens · 0.2 s"] * 2
    children = [m for m in messages if (m.metadata or {}).get("parent_id") == sections[0].metadata["id"]]
    assert children and all("calculator" in str(m.metadata.get("title")) for m in children)
    assert "1024" in str(sections[0].content) and "34" in str(sections[1].content)


def test_a_finished_delegate_call_is_drawn_with_its_result_once():
    titles = _titles(_team_trace(finished=True))
    delegate_steps = [t for t in titles if "delegate" in t]
    assert len(delegate_steps) == 2 and all(t.startswith("✅") for t in delegate_steps), titles
    assert titles[0] == "🗺️ Task ledger"
    assert "📋 Progress check (round 1): satisfied yes · progress yes · looping no" in titles


def test_a_delegate_call_is_pending_while_its_worker_runs():
    messages = render_trace(_team_trace(finished=False))
    delegates = [m for m in messages if "delegate" in str((m.metadata or {}).get("title", ""))]
    assert len(delegates) == 2 and all(m.metadata.get("status") == "pending" for m in delegates)
