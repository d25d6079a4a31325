"""Chat tab logic: one turn through the pipeline with the earlier turns as history."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradio as gr

from agent.events import ErrorEvent, Event
from ui.background import Tick, iterate_until_stopped
from ui.chat_history import history_turns, message_input
from ui.runtime import AgentUnavailable, Runtime
from ui.text import shown
from ui.trace_view import render_trace
from ui.waiting import Ticker

STOP_NOTE = gr.ChatMessage(
    role="assistant", metadata={"title": "⏹️ Stopped by you", "status": "done"},
    content="The turn was stopped: the model call in flight was abandoned and no further step runs. "
            "What it showed so far stays above; send a new message to go on.")
"""Added under the conversation when Chat's Stop is pressed (a step: it is not sent back to the model)."""


def chat_stream(runtime: Runtime, message: Any, history: list[Any] | None,
                use_rag: bool = True, readable: tuple[Path, ...] = (),
                stop: threading.Event | None = None) -> Iterator[list[gr.ChatMessage]]:
    """Answer one chat message; yield the tool steps (collapsed) and the answer as they arrive.

    A file goes with the message it was attached to only (shown as 📎 above the reply); a later message
    without one has no attachment, so nothing is re-sent silently. While nothing new arrives a pending
    bubble says what the turn waits for and for how long; `stop` (or closing this generator) ends it.
    """
    text, file = message_input(message)
    history = list(history or [])
    note = [gr.ChatMessage(role="assistant", metadata={"title": f"📎 {Path(file).name} (this message only)",
                                                       "status": "done"},
                           content="Attached to this message; a later message goes without it unless you attach "
                                   "it again.")] if file else []
    if not text.strip():
        yield [gr.ChatMessage(role="assistant", content="Type a question (you can attach a file to it).")]
        return
    if not runtime.ready.is_set():
        yield [gr.ChatMessage(role="assistant", content="⏳ Waiting for the agent to finish loading…",
                              metadata={"title": "Loading", "status": "pending"})]
    try:
        pipeline = runtime.pipeline()
    except AgentUnavailable as exc:
        yield [gr.ChatMessage(role="assistant", content=f"❌ {shown(exc)}")]
        return
    events: list[Event] = []
    stop = stop or threading.Event()
    ticker = Ticker(runtime.settings.MODEL_NAME, runtime.settings.LLM_TIMEOUT, runtime.settings.TOOL_TIMEOUT)
    try:
        # In a worker: this generator yields at least every 0.25 s, so gradio's cancel (Stop) lands at once
        # instead of after the model call; closing it (the cancel) sets `stop`, and the worker drops the run.
        for item in iterate_until_stopped(
                lambda: pipeline.stream(text, file_path=file, history=history_turns(history), use_rag=use_rag,
                                        readable=readable), stop, poll_s=0.25, ticks=True):
            if not isinstance(item, Tick):
                events.append(item)
                ticker.event()
            yield note + render_trace(events, answer_prefix="") + ticker.note(events)
    except Exception as exc:  # noqa: BLE001 - shown in the chat, the session goes on
        events.append(ErrorEvent(stage="app", message=f"{type(exc).__name__}: {exc}"))
        yield note + render_trace(events, answer_prefix="")
        return
    finally:
        stop.set()
    if not events:
        yield [gr.ChatMessage(role="assistant", content="The agent returned nothing; see the server log.")]


def with_stop_note(history: list[Any] | None) -> list[Any]:
    """The conversation after Stop: what it showed, its unfinished waiting bubble dropped, and the stop note."""
    kept = [m for m in history or [] if _status(m) != "pending"]
    return [*kept, STOP_NOTE]


def _status(message: Any) -> str | None:
    meta = message.get("metadata") if isinstance(message, dict) else getattr(message, "metadata", None)
    return (meta or {}).get("status") if isinstance(meta, dict) else None
