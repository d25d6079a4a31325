"""The loop of one run: the LangGraph react loop (or the team) in the run's workspace, its events streamed live.

The graph runs in a pooled thread and its nodes emit into a queue the caller reads, so each event
reaches the caller as it happens while LangGraph runs each step inline (no thread pool per run);
`solve()`, which collects everything anyway, runs it inline. The run's workspace closes with the run,
also when the caller stops listening, which ends the run at its next node.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextvars
import queue
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig

from agent.events import Event
from agent.graph import recursion_limit
from agent.parts import Parts
from agent.run_client import RunEvents
from agent.run_limits import RunBudget, TokenMeter
from agent.run_request import RunRequest
from agent.state import RunContext
from agent.team import run_team
from agent.toolsets import SMALL_WINDOW_TOKENS, ToolsetChoice
from config import Settings
from models import ModelClient
from models.context_window import ContextWindows
from models.messages import message_text
from tools.core.context import ToolContext
from tools.core.services import RunServices
from tools.core.workspace import open_workspace

# Threads that drive graph runs; idle ones are reused across runs.
_RUNNER = cf.ThreadPoolExecutor(max_workers=256, thread_name_prefix="agent-run")


@dataclass(frozen=True)
class LoopStart:
    """What the loop of one run starts from: the routed request, its first messages, its client and meters."""

    request: RunRequest
    messages: list[BaseMessage]
    attachments: tuple[Path, ...]
    client: ModelClient
    trace: RunEvents
    meter: TokenMeter
    started: float
    route_tools: tuple[str, ...] = ()
    """The attachment route's tools (offered first on a small window)."""


@dataclass
class _Finished:
    """End-of-run marker on a run's event queue: the final graph state, or what went wrong."""

    state: dict[str, Any] | None
    error: BaseException | None = None


def run_loop(loop: LoopStart, parts: Parts, s: Settings, windows: ContextWindows, *,
             live: bool) -> Generator[Event, None, dict[str, Any]]:
    """Run the LangGraph loop in the run's workspace, yielding its events as they happen; the final state."""
    request = loop.request
    assert parts.graph is not None
    inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
    workspace = open_workspace(s, request.task_id or "run")
    tool_context = ToolContext(attachments=loop.attachments, task_id=request.task_id,
                               run_services=RunServices(workspace),
                               readable=request.readable, confined=request.confine, model=loop.client,
                               tool_cache=request.tool_cache)

    def counted(event: Event) -> None:  # tools' model calls (vision) count against the run's tokens too
        loop.meter.observe(event)
        inbox.put(event)

    loop.trace.sink = counted
    window = windows.get(s, probe=parts.endpoint is not None)  # a scripted in-process model has no server
    budget = RunBudget.for_run(s, window, workspace, request.max_iterations, loop.meter)
    toolset = (ToolsetChoice(tuple(parts.registry.names), window.tokens, loop.route_tools, request.question)
               if parts.registry is not None and window.tokens <= SMALL_WINDOW_TOKENS else None)
    ctx = RunContext(settings=s, client=loop.client, tools=tool_context, started=loop.started, emit=inbox.put,
                     budget=budget, toolset=toolset)
    graph, messages = parts.graph, loop.messages
    config: RunnableConfig = {"recursion_limit": recursion_limit(budget.max_iterations)}

    team = parts.team_workers() if (request.strategy or s.AGENT_STRATEGY) == "team" else None

    def drive() -> None:
        try:
            if team is not None:  # the team strategy: an orchestrator delegating to workers (agent.team)
                inbox.put(_Finished(run_team(ctx, team, message_text(messages[-1]))))
            else:
                inbox.put(_Finished(graph.invoke({"messages": messages, "iterations": 0}, config=config,
                                                 context=ctx)))
        except BaseException as exc:  # noqa: BLE001 - handed to the consuming thread
            inbox.put(_Finished(None, exc))
        finally:
            workspace.close()  # the run's files go with it, also when the caller stopped listening

    if live:
        _RUNNER.submit(contextvars.copy_context().run, drive)  # each event reaches the caller as it happens
    else:
        drive()  # solve() collects everything anyway: skip the thread hand-offs
    try:
        while not isinstance(item := inbox.get(), _Finished):
            yield item
    finally:
        ctx.cancelled.set()  # the caller stopped listening: end the run at the next node
    if item.error is not None:
        raise item.error
    return item.state or {}
