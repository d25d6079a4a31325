"""Chat tab logic: one turn through the pipeline with the earlier turns as history."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradio as gr

from agent.events import ErrorEvent, Event
from ui.chat_history import history_turns, message_input
from ui.runtime import AgentUnavailable, Runtime
from ui.text import shown
from ui.trace_view import render_trace


def chat_stream(runtime: Runtime, message: Any, history: list[Any] | None,
                use_rag: bool = True, readable: tuple[Path, ...] = ()) -> Iterator[list[gr.ChatMessage]]:
    """Answer one chat message; yield the tool steps (collapsed) and the answer as they arrive.

    A file goes with the message it was attached to only (shown as 📎 above the reply); a later message
    without one has no attachment, so nothing is re-sent silently.
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
    try:
        for event in pipeline.stream(text, file_path=file, history=history_turns(history), use_rag=use_rag,
                                     readable=readable):
            events.append(event)
            yield note + render_trace(events, answer_prefix="")
    except Exception as exc:  # noqa: BLE001 - shown in the chat, the session goes on
        events.append(ErrorEvent(stage="app", message=f"{type(exc).__name__}: {exc}"))
        yield note + render_trace(events, answer_prefix="")
        return
    if not events:
        yield [gr.ChatMessage(role="assistant", content="The agent returned nothing; see the server log.")]
