"""The LangGraph loop: assistant ⇄ tools, capped at MAX_ITERATIONS, then one best-effort answer.

    START → assistant ─(tool calls)→ tools → assistant …
                     ├─(no tool calls, or the model failed)→ END
                     └─(tool calls at the cap)→ final_answer → END

Nodes hand typed trace events to `RunContext.emit` the moment they happen, so the caller sees every
model call, retry, tool call and result live (the pipeline runs the graph in a worker thread and
yields from a queue; this also lets LangGraph run each single-task step inline, without a thread
pool per run).
"""

from __future__ import annotations

import concurrent.futures as cf
from typing import Any, Callable

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from models.messages import message_text
from agent.events import ErrorEvent, Event, IterationCap, ModelCall, Retry, ToolCall, ToolResult
from models.client import Failure, LLMCallError, call_model
from agent.prompts import FINAL_ANSWER_REQUEST
from agent.state import AgentState, RunCancelled, RunContext
from tools.executor import ToolOutcome, run_tool
from tools.registry import ToolRegistry

MAX_PARALLEL_TOOLS = 4


def build_graph(registry: ToolRegistry) -> CompiledStateGraph:
    """Compile the loop over the registry's tools; the model, gate and limits come per run (RunContext)."""

    def assistant(state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        ctx, emit = _begin(runtime)
        iteration = state.get("iterations", 0) + 1
        return _model_turn(ctx, emit, ctx.model, list(state["messages"]), iteration, final=False)

    def tools(state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        ctx, emit = _begin(runtime)
        last = state["messages"][-1]
        assert isinstance(last, AIMessage)
        return {"messages": _run_tool_calls(last, registry, ctx, emit)}

    def final_answer(state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        ctx, emit = _begin(runtime)
        emit(IterationCap(elapsed_s=ctx.elapsed(), iterations=state.get("iterations", 0)))
        request = HumanMessage(content=FINAL_ANSWER_REQUEST)
        messages = _without_dangling_calls(list(state["messages"])) + [request]
        update = _model_turn(ctx, emit, ctx.final_model, messages, state.get("iterations", 0), final=True)
        update["messages"] = [request] + update.get("messages", [])
        return update

    def should_continue(state: AgentState, runtime: Runtime[RunContext]) -> str:
        if state.get("error"):
            return END
        last = state["messages"][-1]
        if not isinstance(last, AIMessage) or not (last.tool_calls or last.invalid_tool_calls):
            return END
        if state.get("iterations", 0) >= runtime.context.settings.MAX_ITERATIONS:
            return "final_answer"
        return "tools"

    graph = StateGraph(AgentState, context_schema=RunContext)
    graph.add_node("assistant", assistant)
    graph.add_node("tools", tools)
    graph.add_node("final_answer", final_answer)
    graph.add_edge(START, "assistant")
    graph.add_conditional_edges("assistant", should_continue, ["tools", "final_answer", END])
    graph.add_edge("tools", "assistant")
    graph.add_edge("final_answer", END)
    return graph.compile()


def _begin(runtime: Runtime[RunContext]) -> tuple[RunContext, Callable[[Event], None]]:
    ctx = runtime.context
    if ctx.cancelled.is_set():
        raise RunCancelled()
    return ctx, ctx.emit


def recursion_limit(max_iterations: int) -> int:
    """LangGraph super-steps one run may take: two per iteration plus the final answer, with slack."""
    return 2 * max_iterations + 5


def _model_turn(ctx: RunContext, emit: Callable[[Event], None], model: Any, messages: list[BaseMessage],
                iteration: int, *, final: bool) -> dict[str, Any]:
    def on_retry(attempt: int, delay: float, failure: Failure) -> None:
        emit(Retry(elapsed_s=ctx.elapsed(), attempt=attempt, max_retries=ctx.settings.RATE_LIMIT_RETRY_MAX,
                   delay_s=round(delay, 3), reason=failure.reason, status_code=failure.status_code,
                   retry_after_s=failure.retry_after_s))

    try:
        result = call_model(model, messages, ctx.settings, ctx.gate, on_retry=on_retry)
    except LLMCallError as exc:
        emit(ErrorEvent(elapsed_s=ctx.elapsed(), stage="model", message=str(exc)))
        return {"error": str(exc), "iterations": iteration}
    msg = result.message
    emit(ModelCall(elapsed_s=ctx.elapsed(), iteration=iteration, model=_model_name(model, ctx),
                   latency_s=round(result.latency_s, 4), prompt_tokens=result.prompt_tokens,
                   completion_tokens=result.completion_tokens, content=message_text(msg),
                   tool_calls=[{"id": c.get("id"), "name": c["name"], "args": c["args"]} for c in msg.tool_calls]
                   + [{"id": c.get("id"), "name": c.get("name"), "args": c.get("args"), "invalid": True}
                      for c in msg.invalid_tool_calls],
                   final=final))
    return {"messages": [msg], "iterations": iteration}


def _run_tool_calls(message: AIMessage, registry: ToolRegistry, ctx: RunContext,
                    emit: Callable[[Event], None]) -> list[ToolMessage]:
    """Answer every tool call of one assistant message (in parallel), in the order they were asked."""
    config: RunnableConfig = ctx.tools.to_config()
    replies: dict[str, ToolMessage] = {}
    jobs: list[tuple[str, str, dict[str, Any]]] = []
    for call in message.tool_calls:
        call_id = call.get("id") or f"call_{len(jobs)}"
        emit(ToolCall(elapsed_s=ctx.elapsed(), call_id=call_id, name=call["name"], args=dict(call["args"])))
        jobs.append((call_id, call["name"], dict(call["args"])))
    for bad in message.invalid_tool_calls:
        call_id, name = bad.get("id") or "invalid", bad.get("name") or "?"
        emit(ToolCall(elapsed_s=ctx.elapsed(), call_id=call_id, name=name, args={"raw": bad.get("args")}))
        text = (f"Error: the arguments for {name} were not valid JSON ({bad.get('error') or 'parse error'}). "
                "Call the tool again with a JSON object of arguments.")
        outcome = ToolOutcome(output=text, ok=False, duration_s=0.0, error_kind="bad_arguments")
        replies[call_id] = _reply(ctx, emit, call_id, name, outcome)

    def execute(name: str, args: dict[str, Any]) -> ToolOutcome:
        tool = registry.get(name)
        if tool is None:
            available = ", ".join(registry.names) or "(none)"
            return ToolOutcome(output=f"Error: there is no tool named {name!r}. Available tools: {available}.",
                               ok=False, duration_s=0.0, error_kind="unknown_tool")
        return run_tool(tool, args, ctx.settings, config)

    if len(jobs) == 1:
        call_id, name, args = jobs[0]
        replies[call_id] = _reply(ctx, emit, call_id, name, execute(name, args))
    elif jobs:
        with cf.ThreadPoolExecutor(max_workers=min(MAX_PARALLEL_TOOLS, len(jobs))) as pool:
            futures = {pool.submit(execute, name, args): (call_id, name) for call_id, name, args in jobs}
            for future in cf.as_completed(futures):
                call_id, name = futures[future]
                replies[call_id] = _reply(ctx, emit, call_id, name, future.result())
    order = [c.get("id") or f"call_{i}" for i, c in enumerate(message.tool_calls)]
    order += [b.get("id") or "invalid" for b in message.invalid_tool_calls]
    return [replies[call_id] for call_id in order if call_id in replies]


def _reply(ctx: RunContext, emit: Callable[[Event], None], call_id: str, name: str, outcome: ToolOutcome) -> ToolMessage:
    emit(ToolResult(elapsed_s=ctx.elapsed(), call_id=call_id, name=name, output=outcome.output, ok=outcome.ok,
                    duration_s=round(outcome.duration_s, 4), truncated_chars=outcome.truncated_chars,
                    error_kind=outcome.error_kind))
    return ToolMessage(content=outcome.output, tool_call_id=call_id, name=name,
                       status="success" if outcome.ok else "error")


def _without_dangling_calls(messages: list[BaseMessage]) -> list[BaseMessage]:
    """Drop tool calls that were never answered (the cap hit before the tools ran): the API rejects them."""
    last = messages[-1] if messages else None
    if isinstance(last, AIMessage) and (last.tool_calls or last.invalid_tool_calls):
        text = message_text(last)
        return messages[:-1] + ([AIMessage(content=text)] if text.strip() else [])
    return messages


def _model_name(model: Any, ctx: RunContext) -> str:
    bound = getattr(model, "bound", model)  # a RunnableBinding from bind_tools wraps the chat model
    return str(getattr(bound, "model_name", None) or getattr(bound, "model", None) or ctx.settings.MODEL_NAME)
