"""What the LangGraph loop carries: the graph state, and the per-run context its nodes read."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, TypedDict

from langchain_core.messages import BaseMessage
from langgraph.graph.message import add_messages

from agent.events import Event
from agent.run_limits import RunBudget
from agent.toolsets import ToolsetChoice
from config import Settings
from models.context_window import DEFAULT_CONTEXT_TOKENS, ContextWindow
from models.model_client import ModelClient
from tools.core.context import ToolContext


class AgentState(TypedDict, total=False):
    """The loop's state."""

    messages: Annotated[list[BaseMessage], add_messages]
    """The conversation: system prompt, task message, then assistant and tool messages."""
    iterations: int
    """Assistant turns taken so far (model calls with tools offered)."""
    error: str | None
    """Set when the model could not be reached after retries; the loop then ends."""
    conclude_asked: bool
    """True once a reply cut at the length limit was answered with a request to conclude (asked once a run)."""
    budget_exhausted: bool
    """True once the run's model calls passed MAX_TOKENS_PER_TASK: no further tool call, one best-effort answer."""


@dataclass
class RunContext:
    """Per-run values the nodes need that are not conversation state (LangGraph's `context`)."""

    settings: Settings
    client: ModelClient
    """The run's model client (gate, retries, endpoint check, hooks); tools receive it in their ToolContext."""
    tools: ToolContext = field(default_factory=ToolContext)
    """What tool calls of this run get: attachments, task id, workspace, what they may open, model client."""
    started: float = field(default_factory=time.monotonic)
    """`time.monotonic()` at the start of the run; events carry seconds since then."""
    emit: Callable[[Event], None] = lambda event: None
    """Where nodes send trace events the moment they happen (the pipeline's queue)."""
    cancelled: threading.Event = field(default_factory=threading.Event)
    """Set when the caller stopped listening; the next node ends the run instead of calling the model."""
    budget: RunBudget | None = None
    """Iteration cap, window, masking and token meter of the run (None: MAX_ITERATIONS and the default window)."""
    toolset: ToolsetChoice | None = None
    """On a small window, the tools this run's requests offer (`agent.toolsets`); None: every registry tool."""

    def __post_init__(self) -> None:
        if self.budget is None:
            window = ContextWindow(self.settings.LLM_CONTEXT_TOKENS or DEFAULT_CONTEXT_TOKENS, "default")
            self.budget = RunBudget.for_run(self.settings, window, self.tools.workspace)

    @property
    def limits(self) -> RunBudget:
        """The run's budget (always set after construction)."""
        assert self.budget is not None
        return self.budget

    def elapsed(self) -> float:
        """Seconds since the run started."""
        return round(time.monotonic() - self.started, 4)


class RunCancelled(Exception):
    """The caller abandoned the run (closed the event stream); raised inside the graph to stop it."""
