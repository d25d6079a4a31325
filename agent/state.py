"""What the LangGraph loop carries: the graph state, and the per-run context its nodes read."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Annotated, Callable, TypedDict

from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable
from langgraph.graph.message import add_messages

from agent.events import Event
from models.client import RequestGate
from config import Settings
from tools.context import ToolContext


class AgentState(TypedDict, total=False):
    """The loop's state."""

    messages: Annotated[list[BaseMessage], add_messages]
    """The conversation: system prompt, task message, then assistant and tool messages."""
    iterations: int
    """Assistant turns taken so far (model calls with tools offered)."""
    error: str | None
    """Set when the model could not be reached after retries; the loop then ends."""


@dataclass
class RunContext:
    """Per-run values the nodes need that are not conversation state (LangGraph's `context`)."""

    settings: Settings
    model: Runnable[LanguageModelInput, BaseMessage]
    """The chat model with the active tools bound."""
    final_model: Runnable[LanguageModelInput, BaseMessage]
    """The same model without tools, for the best-effort answer at the iteration cap."""
    gate: RequestGate
    tools: ToolContext = field(default_factory=ToolContext)
    """What tool calls of this run get: attachments, task id, workspace, what they may open, model client."""
    started: float = field(default_factory=time.monotonic)
    """`time.monotonic()` at the start of the run; events carry seconds since then."""
    emit: Callable[[Event], None] = lambda event: None
    """Where nodes send trace events the moment they happen (the pipeline's queue)."""
    cancelled: threading.Event = field(default_factory=threading.Event)
    """Set when the caller stopped listening; the next node ends the run instead of calling the model."""

    def elapsed(self) -> float:
        """Seconds since the run started."""
        return round(time.monotonic() - self.started, 4)


class RunCancelled(Exception):
    """The caller abandoned the run (closed the event stream); raised inside the graph to stop it."""
