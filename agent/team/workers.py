"""The team's workers: one loop per role over its tools (the tool-spec table), run fresh for each delegation.

A worker is `agent.graph`'s loop with its own system prompt, tool subset and context (the task it was
given and the attachments' paths, nothing of the orchestrator's). It shares the run's model client, token
meter, workspace and cancel flag, so its calls count against the task's budget; it has its own observation
masker and an iteration cap of min(WORKER_MAX_ITERATIONS, what the task has left). Every event it emits
carries its name and the delegation's call id: its loop's steps, and, through a `reporting_client`, its
retries and its tools' own model calls (a vision or transcription call). Its last message is the report,
cut to WORKER_REPORT_TOKENS.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph

from agent.events import Event, ModelCall, WorkerReported
from agent.graph import build_graph, recursion_limit
from agent.run_client import reporting_client
from agent.run_limits import ObservationMasker, RunBudget
from agent.state import AgentState, RunContext
from agent.team.prompts import WORKER_PROMPTS
from models.messages import message_text
from tools.core.registry import ToolRegistry
from tools.core.specs import ROLES, Role, names_for


@dataclass(frozen=True)
class Worker:
    """One role's loop, compiled once over the role's active tools."""

    role: Role
    tools: tuple[str, ...]
    graph: CompiledStateGraph[AgentState, RunContext, AgentState, AgentState]


def build_workers(registry: ToolRegistry, *, raise_internal_errors: bool = False) -> dict[Role, Worker]:
    """A worker per role that has at least one active tool (a role left with none is not on the team)."""
    workers: dict[Role, Worker] = {}
    for role in ROLES:
        names = names_for(role, registry.names)
        if not names:
            continue
        subset = ToolRegistry(tools=[t for t in registry.tools if t.name in names], tiers={"team": names})
        workers[role] = Worker(role, tuple(names), build_graph(subset, raise_internal_errors=raise_internal_errors))
    return workers


@dataclass
class _Tally:
    """What one delegation's loop spent, counted from its ModelCall events."""

    steps: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def observe(self, event: Event) -> None:
        if isinstance(event, ModelCall):
            with self.lock:
                self.steps += 1 if event.purpose == "agent" and not event.final else 0
                self.prompt_tokens += event.prompt_tokens
                self.completion_tokens += event.completion_tokens


def worker_task(task: str, attachments: tuple[Path, ...]) -> str:
    """The worker's only user message: the orchestrator's task and the attachments' paths."""
    text = f"Task from the orchestrator:\n{task.strip()}"
    if attachments:
        text += "\n\nAttached files (absolute paths):\n" + "\n".join(f"- {p}" for p in attachments)
    return text


def run_worker(ctx: RunContext, worker: Worker, task: str, call_id: str, max_iterations: int) -> WorkerReported:
    """Run `worker` on `task` inside the run `ctx`; its report (cut to WORKER_REPORT_TOKENS) as an event."""
    s, started, tally = ctx.settings, ctx.elapsed(), _Tally()

    def emit(event: Event) -> None:
        event.worker, event.delegation = worker.role, call_id
        tally.observe(event)
        ctx.emit(event)

    def reported(event: Event) -> None:  # the client's hooks: tools' model calls count on the task's meter
        ctx.limits.meter.observe(event)
        emit(event)

    client = reporting_client(ctx.client, reported, ctx.elapsed)
    budget = RunBudget(s, ctx.limits.window, ObservationMasker(s, ctx.tools.workspace), ctx.limits.meter,
                       max_iterations)
    wctx = RunContext(settings=s, client=client, tools=dataclasses.replace(ctx.tools, model=client),
                      started=ctx.started, emit=emit, cancelled=ctx.cancelled, budget=budget)
    messages = [SystemMessage(content=WORKER_PROMPTS[worker.role]),
                HumanMessage(content=worker_task(task, ctx.tools.attachments))]
    config: RunnableConfig = {"recursion_limit": recursion_limit(max_iterations)}
    state: dict[str, Any] = worker.graph.invoke({"messages": messages, "iterations": 0}, config=config,
                                                context=wctx)
    text = _last_reply(state)
    report, cut = cut_report(text, s.WORKER_REPORT_TOKENS, ctx.client.estimator().tokens_per_char)
    return WorkerReported(elapsed_s=ctx.elapsed(), worker=worker.role, delegation=call_id, task=task, report=report,
                          steps=tally.steps, prompt_tokens=tally.prompt_tokens,
                          completion_tokens=tally.completion_tokens, duration_s=round(ctx.elapsed() - started, 4),
                          cut_tokens=cut, started_s=started)


def _last_reply(state: dict[str, Any]) -> str:
    if state.get("error"):
        return f"The worker could not finish: {state['error']}"
    for message in reversed(state.get("messages", [])):
        if isinstance(message, AIMessage) and not message.tool_calls:
            return message_text(message)
    return ""


def cut_report(text: str, max_tokens: int, tokens_per_char: float) -> tuple[str, int]:
    """`text` cut to about `max_tokens` tokens with a note saying how much was cut; (report, tokens cut)."""
    limit = int(max_tokens / max(tokens_per_char, 1e-6))
    if len(text) <= limit:
        return text, 0
    cut_tokens = round((len(text) - limit) * tokens_per_char)
    note = (f"\n[report cut at WORKER_REPORT_TOKENS={max_tokens}: about {cut_tokens:,} more tokens not shown; "
            "ask the worker for the part you need]")
    return text[:limit].rstrip() + note, cut_tokens
