"""The team strategy's loop: ledger → rounds of concurrent delegations → progress check → answer.

    task ledger (facts, plan) → [orchestrator turn: delegate calls | FINAL ANSWER]
        → the round's delegations at once → progress check → (TEAM_STALL_LIMIT stalls: replan) → next turn

Every orchestrator request is rebuilt from the question, the ledger and the workers' reports (never a
worker's observation), so its size grows with the reports, not with the workers' pages. The task's
budget is shared: each orchestrator turn and each worker step is one of the run's iterations, and every
call counts on the run's token meter. At the cap (or past MAX_TOKENS_PER_TASK) one tool-less request asks
for the best answer. The result is a graph-like final state: `{"messages": [...]}` or `{"error": ...}`.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextvars
import threading
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from agent.events import IterationCap, LedgerMade, ProgressChecked, TokenBudgetExhausted, ToolCall, ToolResult
from agent.graph import model_turn
from agent.prompts import FINAL_ANSWER_REQUEST
from agent.state import RunCancelled, RunContext
from agent.team.delegate import make_delegate_tool
from agent.team.ledger import Ledger, Report, parse_ledger, parse_progress
from agent.team.prompts import (
    ANSWER_REQUEST,
    LEDGER_REQUEST,
    ORCHESTRATOR_PROMPT,
    PROGRESS_REQUEST,
    REPLAN_REQUEST,
    ROUND_REQUEST,
    worker_lines,
)
from agent.team.workers import Worker, run_worker
from agent.text_tool_calls import tool_argument_names
from models.messages import message_text
from tools.core.specs import Role

State = dict[str, Any]


@dataclass
class _Team:
    """One run's team: its context, workers, ledger and the task's iterations spent so far."""

    ctx: RunContext
    workers: dict[Role, Worker]
    task: str
    """The question as the router gave it (with the attachment instruction)."""
    ledger: Ledger = field(default_factory=Ledger)
    iterations: int = 0
    worker_cap: int = 1
    """This round's iteration cap for each worker."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def left(self) -> int:
        """Iterations the task has left."""
        return self.ctx.limits.max_iterations - self.iterations

    def request(self, text: str) -> list[BaseMessage]:
        """An orchestrator request: its role line, then the question, the ledger, the reports and `text`."""
        context = "\n\n".join(part for part in (self.task.strip(), self.ledger.render(), text) if part)
        return [SystemMessage(content=ORCHESTRATOR_PROMPT), HumanMessage(content=context)]

    def delegate(self, worker: Role, task: str, call_id: str) -> str:
        """Run one delegation (the delegate tool's body); its report, also kept in the ledger."""
        event = run_worker(self.ctx, self.workers[worker], task, call_id, self.worker_cap)
        self.ctx.emit(event)
        with self.lock:
            self.iterations += event.steps
            self.ledger.reports.append(Report(worker, task, event.report))
        return event.report


def run_team(ctx: RunContext, workers: dict[Role, Worker], task: str) -> State:
    """Answer `task` with the team; the final state the pipeline extracts the answer from."""
    team = _Team(ctx, workers, task)
    tool = make_delegate_tool(list(workers), team.delegate)
    arg_names = tool_argument_names([tool])
    if (failed := _make_ledger(team, replan=False)) is not None:
        return failed
    while True:
        if ctx.cancelled.is_set():  # the caller stopped listening: no further request
            raise RunCancelled()
        if ctx.limits.meter.exhausted or team.left <= 0:
            return _answer(team, cut=True)
        team.iterations += 1
        messages = team.request(ROUND_REQUEST)
        update = model_turn(ctx, ctx.emit, messages, team.iterations, tools=[tool], arg_names=arg_names)
        if update.get("error"):
            return update
        reply = update["messages"][-1]
        assert isinstance(reply, AIMessage)
        if not reply.tool_calls and not reply.invalid_tool_calls:
            return {"messages": [*messages, reply]}
        _run_round(team, tool, reply)
        if (done := _check_progress(team)) is not None:
            return done


def _run_round(team: _Team, tool: Any, reply: AIMessage) -> None:
    """Answer the turn's delegate calls, all at once; malformed calls become reports saying so."""
    ctx = team.ctx
    for bad in reply.invalid_tool_calls:
        team.ledger.reports.append(Report("orchestrator", str(bad.get("args") or ""),
                                          "Error: that delegate call's arguments were not valid JSON; call "
                                          "delegate(worker, task) again."))
    calls = [c for c in reply.tool_calls if c["name"] == "delegate"]
    for other in (c for c in reply.tool_calls if c["name"] != "delegate"):
        team.ledger.reports.append(Report("orchestrator", other["name"], f"Error: there is no tool named "
                                          f"{other['name']!r}; your only tool is delegate(worker, task)."))
    if not calls:
        return
    team.worker_cap = max(1, min(ctx.settings.WORKER_MAX_ITERATIONS, team.left // len(calls)))

    def one(call: Any) -> None:
        call_id = call.get("id") or "delegate"
        ctx.emit(ToolCall(elapsed_s=ctx.elapsed(), call_id=call_id, name="delegate", args=dict(call["args"])))
        started = ctx.elapsed()
        result = tool.invoke({"type": "tool_call", "id": call_id, "name": "delegate", "args": call["args"]})
        output = message_text(result) if hasattr(result, "content") else str(result)
        if output.startswith("Error:"):
            team.ledger.reports.append(Report(str(call["args"].get("worker")), str(call["args"].get("task")), output))
        ctx.emit(ToolResult(elapsed_s=ctx.elapsed(), call_id=call_id, name="delegate", output=output,
                            ok=not output.startswith("Error:"), duration_s=round(ctx.elapsed() - started, 4)))

    with cf.ThreadPoolExecutor(max_workers=len(calls), thread_name_prefix="team-worker") as pool:
        for future in [pool.submit(contextvars.copy_context().run, one, call) for call in calls]:
            future.result()  # a worker's bug or the run's cancellation ends the run


def _make_ledger(team: _Team, *, replan: bool) -> State | None:
    """Ask for the task ledger (or a new one after stalls) and record it; the error state if the call failed."""
    ctx, ledger = team.ctx, team.ledger
    workers = ", ".join(team.workers) or "none"
    ask = (REPLAN_REQUEST.format(stalls=ledger.stalls, workers=workers) if replan
           else LEDGER_REQUEST.format(workers=workers)) + "\nThe workers:\n" + worker_lines(list(team.workers))
    update = model_turn(ctx, ctx.emit, team.request(ask), team.iterations, final=True, label="ledger")
    if update.get("error"):
        return update
    ledger.facts, ledger.plan = parse_ledger(message_text(update["messages"][-1]))
    ledger.replans += replan
    ctx.emit(LedgerMade(elapsed_s=ctx.elapsed(), facts=ledger.facts, plan=ledger.plan, replan=replan))
    return None


def _check_progress(team: _Team) -> State | None:
    """After a round: ask for progress, re-plan after TEAM_STALL_LIMIT stalls; a final state when done."""
    ctx, ledger = team.ctx, team.ledger
    ledger.rounds += 1
    update = model_turn(ctx, ctx.emit, team.request(PROGRESS_REQUEST), team.iterations, final=True, label="progress")
    if update.get("error"):
        return update
    progress = parse_progress(message_text(update["messages"][-1]))
    ledger.stalls = ledger.stalls + 1 if progress.stalled and not progress.satisfied else 0
    ctx.emit(ProgressChecked(elapsed_s=ctx.elapsed(), satisfied=progress.satisfied, looping=progress.looping,
                             progress=progress.progress, next_step=progress.next_step, round=ledger.rounds,
                             stalls=ledger.stalls))
    if progress.satisfied:
        return _answer(team, cut=False)
    if ledger.stalls >= ctx.settings.TEAM_STALL_LIMIT:
        failed = _make_ledger(team, replan=True)
        ledger.stalls = 0
        return failed
    return None


def _answer(team: _Team, *, cut: bool) -> State:
    """One tool-less request for the answer: the reports suffice, or the task's budget is spent (`cut`)."""
    ctx = team.ctx
    if cut and ctx.limits.meter.exhausted:
        ctx.emit(TokenBudgetExhausted(elapsed_s=ctx.elapsed(), tokens_used=ctx.limits.meter.used,
                                      limit=ctx.limits.meter.limit))
    elif cut:
        ctx.emit(IterationCap(elapsed_s=ctx.elapsed(), iterations=team.iterations))
    messages = team.request(FINAL_ANSWER_REQUEST if cut else ANSWER_REQUEST)
    update = model_turn(ctx, ctx.emit, messages, team.iterations, final=True, label=None if cut else "answer")
    if update.get("error"):
        return update
    return {"messages": [*messages, *update["messages"]]}
