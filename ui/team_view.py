"""Render a team run's trace: the ledger, progress checks, and each delegation as a collapsible worker section.

A worker's events (tagged with `worker` and `delegation`) are gathered under one parent step per
delegation (Gradio's nested thoughts: `metadata.id` / `parent_id`), placed where the worker started;
its title gives the worker, its steps, tokens and time once its report arrived (a spinner until then).
Everything else renders as in a single-loop run (`ui.trace_view`). A `delegate` call is drawn with its
result once that arrived (the worker's steps come between the two in the trace: drawn apart, a finished
call would keep its spinner).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import gradio as gr
from gradio.components.chatbot import MetadataDict

from agent.events import Event, LedgerMade, ProgressChecked, ToolCall, ToolResult, WorkerReported
from ui.text import shown

Renderer = Callable[[Sequence[Event]], list[gr.ChatMessage]]


def is_team_trace(events: Sequence[Event]) -> bool:
    """True when the events come from the team strategy (a ledger, or a worker's events)."""
    return any(isinstance(ev, LedgerMade) or ev.delegation for ev in events)


def ledger_message(ev: LedgerMade) -> gr.ChatMessage:
    """The task ledger (or the re-made one after stalls)."""
    title = "🗺️ New plan after stalled rounds (ledger re-made)" if ev.replan else "🗺️ Task ledger"
    body = f"{shown(ev.facts)}\n\n**Plan**\n\n{shown(ev.plan)}" if ev.facts else f"**Plan**\n\n{shown(ev.plan)}"
    return gr.ChatMessage(role="assistant", content=body, metadata={"title": title, "status": "done"})


def progress_message(ev: ProgressChecked) -> gr.ChatMessage:
    """One progress check: the three booleans, the stall count and the next step."""
    mark: Callable[[bool], str] = lambda flag: "yes" if flag else "no"  # noqa: E731
    title = (f"📋 Progress check (round {ev.round}): satisfied {mark(ev.satisfied)} · progress "
             f"{mark(ev.progress)} · looping {mark(ev.looping)}")
    body = f"Rounds without progress: {ev.stalls}" + (f"\n\nNext: {shown(ev.next_step)}" if ev.next_step else "")
    return gr.ChatMessage(role="assistant", content=body, metadata={"title": title, "status": "done"})


def _section(delegation: str, worker: str, report: WorkerReported | None) -> gr.ChatMessage:
    meta: MetadataDict = {"id": f"worker-{delegation}", "status": "done" if report else "pending"}
    if report is None:
        meta["title"] = f"👷 {worker} working…"
        return gr.ChatMessage(role="assistant", content="(working)", metadata=meta)
    meta["title"] = (f"👷 {worker} · {report.steps} step(s) · {report.prompt_tokens + report.completion_tokens:,} "
                     f"tokens · {report.duration_s:.1f} s")
    meta["duration"] = round(report.duration_s, 2)
    cut = f"\n\n(report cut: about {report.cut_tokens:,} tokens)" if report.cut_tokens else ""
    return gr.ChatMessage(role="assistant", content=f"**Task:** {shown(report.task)}\n\n**Report:** "
                                                    f"{shown(report.report) or '(empty)'}{cut}", metadata=meta)


def render_team(events: Sequence[Event], render_plain: Renderer) -> list[gr.ChatMessage]:
    """The whole trace of a team run; `render_plain` renders runs of ordinary events (pairs tool steps)."""
    out: list[gr.ChatMessage] = []
    plain: list[Event] = []
    order: list[str] = []
    by_delegation: dict[str, list[Event]] = {}
    reports: dict[str, WorkerReported] = {}
    delegated = {ev.call_id: ev for ev in events if isinstance(ev, ToolResult) and ev.name == "delegate"
                 and not ev.delegation}

    def flush() -> None:
        out.extend(render_plain(plain))
        plain.clear()

    for ev in events:
        if isinstance(ev, WorkerReported) and ev.delegation:
            reports[ev.delegation] = ev
        elif ev.delegation:
            if ev.delegation not in by_delegation:
                flush()
                order.append(ev.delegation)
                by_delegation[ev.delegation] = []
                out.append(gr.ChatMessage(role="assistant", content=f"\0section:{ev.delegation}"))
            by_delegation[ev.delegation].append(ev)
        elif isinstance(ev, LedgerMade | ProgressChecked):
            flush()
            out.append(ledger_message(ev) if isinstance(ev, LedgerMade) else progress_message(ev))
        elif isinstance(ev, ToolCall) and ev.call_id in delegated:
            plain.extend((ev, delegated[ev.call_id]))  # the call with its result, drawn as one finished step
        elif not (isinstance(ev, ToolResult) and delegated.get(ev.call_id) is ev):
            plain.append(ev)
    flush()
    return _expand(out, by_delegation, reports, render_plain)


def _expand(out: list[gr.ChatMessage], sections: dict[str, list[Event]], reports: dict[str, WorkerReported],
            render_plain: Renderer) -> list[gr.ChatMessage]:
    """Replace each section marker by its parent step followed by the worker's own steps (its children)."""
    result: list[gr.ChatMessage] = []
    for message in out:
        content = message.content if isinstance(message.content, str) else ""
        if not content.startswith("\0section:"):
            result.append(message)
            continue
        delegation = content.removeprefix("\0section:")
        steps = sections[delegation]
        result.append(_section(delegation, steps[0].worker or "worker", reports.get(delegation)))
        for child in render_plain(steps):
            meta = dict(child.metadata or {})
            meta["parent_id"] = f"worker-{delegation}"
            meta.setdefault("title", "💬 worker message")
            meta.setdefault("status", "done")
            child.metadata = meta  # type: ignore[assignment]
            result.append(child)
    return result
