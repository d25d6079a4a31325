"""What a run is waiting for, and for how long: the note under a live trace while nothing new arrives.

A model call or a slow tool used to show a bare "•••" (and the first RAG lookup a spinner) for tens of
seconds. The trace's events say what comes next: no event yet → the route and knowledge-base lookup
(the embedding model loads on first use); a tool call without its result → that tool; otherwise → the
model. The note names it, the seconds waited so far, and the limit that ends the wait.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

import gradio as gr

from agent.events import AnswerExtracted, ErrorEvent, Event, Retry, ToolCall, ToolResult
from ui.status import format_duration

T = TypeVar("T")


@dataclass(frozen=True)
class Awaited:
    """What the run waits for: a short phrase, and the limit that ends the wait (for the note)."""

    what: str
    limit: str = ""


def awaited(events: Sequence[Event], model: str, llm_timeout: float, tool_timeout: float) -> Awaited | None:
    """What the run waits for after `events`; None once it has ended (answer or error)."""
    if events and isinstance(events[-1], (AnswerExtracted, ErrorEvent)):
        return None
    if not events:
        return Awaited("the route and the knowledge-base lookup (the embedding model loads on the first one)")
    finished = {ev.call_id for ev in events if isinstance(ev, ToolResult)}
    running = [ev.name for ev in events if isinstance(ev, ToolCall) and ev.call_id not in finished]
    if running:
        names = ", ".join(f"`{name}`" for name in running)
        return Awaited(f"the tool {names}", f"a tool call is cut after {tool_timeout:g} s")
    last = events[-1]
    if isinstance(last, Retry):
        return Awaited(f"the model `{model}` (retry {last.attempt}/{last.max_retries} after {last.delay_s:g} s "
                       f"backoff: {last.reason})", f"each request is cut after {llm_timeout:g} s")
    return Awaited(f"the model `{model}` to reply", f"a request is cut after {llm_timeout:g} s")


def waiting_message(wait: Awaited, waited_s: float) -> gr.ChatMessage:
    """The pending bubble under the trace: `⏳ Waiting for the model `x` to reply — 12s so far`."""
    limit = f" ({wait.limit})" if wait.limit else ""
    return gr.ChatMessage(role="assistant", content=f"Waiting {format_duration(waited_s)} so far{limit}.",
                          metadata={"title": f"⏳ Waiting for {wait.what}", "status": "pending"})


class Ticker:
    """Times the wait since the last event; `note(events)` is the waiting bubble (or nothing once ended)."""

    def __init__(self, model: str, llm_timeout: float, tool_timeout: float) -> None:
        self.model, self.llm_timeout, self.tool_timeout = model, llm_timeout, tool_timeout
        self.since = time.monotonic()

    def event(self) -> None:
        """An event arrived: the wait starts again."""
        self.since = time.monotonic()

    def note(self, events: Sequence[Event]) -> list[gr.ChatMessage]:
        """[the waiting bubble] while the run waits, [] once it has ended."""
        wait = awaited(events, self.model, self.llm_timeout, self.tool_timeout)
        return [] if wait is None else [waiting_message(wait, time.monotonic() - self.since)]


def call_with_notes(work: Callable[[], T], note: Callable[[float], str], tick_s: float = 1.0) -> Iterator[str | T]:
    """Run `work()` in a thread; yield `note(seconds so far)` every `tick_s` until it returns, then its result.

    For one-shot handlers whose first call can be long (the first RAG lookup loads the embedding model).
    The worker's exception is re-raised here.
    """
    done: queue.Queue[tuple[bool, object]] = queue.Queue()

    def run() -> None:
        try:
            done.put((True, work()))
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            done.put((False, exc))

    started = time.monotonic()
    threading.Thread(target=run, name="with-notes", daemon=True).start()
    while True:
        try:
            ok, value = done.get(timeout=tick_s)
        except queue.Empty:
            yield note(time.monotonic() - started)
            continue
        if not ok:
            raise value  # type: ignore[misc]
        yield value  # type: ignore[misc]
        return
