"""The LangGraph loop: assistant ⇄ tools, capped at the run's iterations and tokens, then one best-effort answer.

    START → assistant ─(tool calls)→ tools → assistant …
                     ├─(no tool calls, or the model failed)→ END
                     └─(tool calls at the cap, or MAX_TOKENS_PER_TASK passed)→ final_answer → END

Every request is fitted to the model's window first (`agent.run_limits`: the oldest observations are masked);
a request the server still refuses as too long is masked harder and sent once more.

Nodes hand typed trace events to `RunContext.emit` the moment they happen, so the caller sees every
model call, retry, tool call and result live (the pipeline runs the graph in a worker thread and
yields from a queue; this also lets LangGraph run each single-task step inline, without a thread
pool per run).
"""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from agent.events import ErrorEvent, Event, IterationCap, ModelCall, TokenBudgetExhausted, ToolCall, ToolResult
from agent.fitting import send_fitted
from agent.prompts import CONCLUDE_REQUEST, FINAL_ANSWER_REQUEST
from agent.state import AgentState, RunCancelled, RunContext
from agent.text_tool_calls import TextToolCalls, find_text_tool_calls, tool_argument_names
from agent.toolsets import offered
from models.client import LLMCallError
from models.cost import cost_usd
from models.messages import message_text
from tools.core.executor import run_tool
from tools.core.outcome import ToolOutcome
from tools.core.registry import ToolRegistry

MAX_PARALLEL_TOOLS = 4
CUT_REPLY_KEEP = 2000
"""Characters of a reply cut at the length limit that stay in the conversation."""


def build_graph(registry: ToolRegistry, *, raise_internal_errors: bool = False,
                ) -> CompiledStateGraph[AgentState, RunContext, AgentState, AgentState]:
    """Compile the loop over the registry's tools; the model client, gate and limits come per run (RunContext).

    `raise_internal_errors`: a tool's bug raises (ending the run with an internal error) instead of
    becoming an observation the model reads (`tools.core.executor.run_tool`).
    """
    arg_names = tool_argument_names(registry.tools)

    def assistant(state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        ctx, emit = _begin(runtime)
        iteration = state.get("iterations", 0) + 1
        if ctx.limits.meter.exhausted:  # a tool's own model calls (vision) spent the rest: no further step
            return {"budget_exhausted": True}
        tools_now, chosen = offered(ctx.toolset, registry.tools, state["messages"], ctx.elapsed())
        if chosen is not None:  # a small window: only the tools this task can use (agent.toolsets)
            emit(chosen)
        update = _model_turn(ctx, emit, list(state["messages"]), iteration, tools=tools_now, arg_names=arg_names)
        if _cut_short(update) and not state.get("conclude_asked"):
            update = _conclude(ctx, emit, _merged(list(state["messages"]), update), update, iteration)
        update["budget_exhausted"] = ctx.limits.meter.exhausted
        return update

    def tools(state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
        ctx, emit = _begin(runtime)
        last = state["messages"][-1]
        assert isinstance(last, AIMessage)
        return {"messages": _run_tool_calls(last, registry, ctx, emit, raise_internal_errors=raise_internal_errors)}

    graph = StateGraph(AgentState, context_schema=RunContext)
    graph.add_node("assistant", assistant)
    graph.add_node("tools", tools)
    graph.add_node("final_answer", _final_answer)
    graph.add_edge(START, "assistant")
    graph.add_conditional_edges("assistant", _next_step, ["tools", "final_answer", END])
    graph.add_edge("tools", "assistant")
    graph.add_edge("final_answer", END)
    return graph.compile()


def _final_answer(state: AgentState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """At the iteration cap or past the token budget: ask once for the best final answer, no more tools."""
    ctx, emit = _begin(runtime)
    if state.get("budget_exhausted"):
        meter = ctx.limits.meter
        emit(TokenBudgetExhausted(elapsed_s=ctx.elapsed(), tokens_used=meter.used, limit=meter.limit))
    else:
        emit(IterationCap(elapsed_s=ctx.elapsed(), iterations=state.get("iterations", 0)))
    request = HumanMessage(content=FINAL_ANSWER_REQUEST)
    messages = _without_dangling_calls(list(state["messages"])) + [request]
    update = _model_turn(ctx, emit, messages, state.get("iterations", 0), final=True)
    replaced = [m for m in update.get("messages", []) if isinstance(m, ToolMessage)]
    update["messages"] = replaced + [request] + [m for m in update.get("messages", []) if m not in replaced]
    return update

def _next_step(state: AgentState, runtime: Runtime[RunContext]) -> str:
    """After the assistant: run its tool calls, ask for the final answer (cap or budget), or end."""
    if state.get("error"):
        return END
    last = state["messages"][-1]
    if state.get("budget_exhausted") and not isinstance(last, AIMessage):
        return "final_answer"  # the budget ran out between a tool result and the next step
    if not isinstance(last, AIMessage) or not (last.tool_calls or last.invalid_tool_calls):
        return END
    if state.get("budget_exhausted") or state.get("iterations", 0) >= runtime.context.limits.max_iterations:
        return "final_answer"
    return "tools"


def _begin(runtime: Runtime[RunContext]) -> tuple[RunContext, Callable[[Event], None]]:
    ctx = runtime.context
    if ctx.cancelled.is_set():
        raise RunCancelled()
    return ctx, ctx.emit


def recursion_limit(max_iterations: int) -> int:
    """LangGraph super-steps one run may take: two per iteration plus the final answer, with slack."""
    return 2 * max_iterations + 5


def _model_turn(ctx: RunContext, emit: Callable[[Event], None], messages: list[BaseMessage], iteration: int, *,
                final: bool = False, tools: list[Any] | None = None,
                arg_names: dict[str, frozenset[str]] | None = None, label: str | None = None) -> dict[str, Any]:
    """One request of a loop, as a ModelCall event; `label` names a call that is no loop step (its `purpose`)."""
    sent = send_fitted(ctx, emit, messages, purpose="final" if final else "agent", tools=tools or ())
    if isinstance(sent.outcome, LLMCallError):
        exc = sent.outcome
        emit(ErrorEvent(elapsed_s=ctx.elapsed(), stage="model", message=str(exc), permanent=exc.permanent))
        return {"error": str(exc), "iterations": iteration, "messages": sent.replaced}
    result = sent.outcome
    msg, text_form = result.message, False
    if tools and not msg.tool_calls and not msg.invalid_tool_calls:
        found = find_text_tool_calls(message_text(msg), arg_names or {})
        if found is not None:
            msg, text_form = _as_tool_calls(msg, found), True
    offered = len(tools or [])
    call = ModelCall(elapsed_s=ctx.elapsed(), iteration=iteration, model=result.model_name or ctx.settings.MODEL_NAME,
                   latency_s=round(result.latency_s, 4), prompt_tokens=result.prompt_tokens,
                   completion_tokens=result.completion_tokens, content=message_text(msg),
                   tool_calls=[{"id": c.get("id"), "name": c["name"], "args": c["args"]}
                               | ({"text_form": True} if text_form else {}) for c in msg.tool_calls]
                   + [{"id": c.get("id"), "name": c.get("name"), "args": c.get("args"), "invalid": True}
                      for c in msg.invalid_tool_calls],
                   final=final, purpose=label or "agent", finish_reason=result.finish_reason,
                   truncated=result.truncated,
                   usage_reported=result.usage_reported, tools_offered=offered,
                   tool_choice=ctx.settings.LLM_TOOL_CHOICE if offered else None,
                   cost_usd=cost_usd(ctx.settings, result.prompt_tokens, result.completion_tokens))
    ctx.limits.meter.observe(call)  # the loop's own calls; helper calls are counted where the pipeline routes them
    emit(call)
    return {"messages": [*sent.replaced, msg], "iterations": iteration}


def _merged(messages: list[BaseMessage], update: dict[str, Any]) -> list[BaseMessage]:
    """`messages` with the tool messages `update` replaced (masked) put in place, matched by id."""
    new = {m.id: m for m in update.get("messages", []) if isinstance(m, ToolMessage) and m.id}
    return [new.get(m.id, m) if m.id else m for m in messages]


def _cut_short(update: dict[str, Any]) -> bool:
    """True when the turn's reply was cut at the length limit and asks for no tool."""
    msgs = update.get("messages") or []
    last = msgs[-1] if msgs else None
    return (isinstance(last, AIMessage) and not last.tool_calls
            and (last.response_metadata or {}).get("finish_reason") == "length")


def _conclude(ctx: RunContext, emit: Callable[[Event], None], messages: list[BaseMessage], cut: dict[str, Any],
              iteration: int) -> dict[str, Any]:
    """Answer a reply cut at the length limit once with a request to conclude (tool-less, so it must answer)."""
    cut_msg = cut["messages"][-1]
    text = message_text(cut_msg)
    # The runaway text only costs context: the model needs its gist, not all of it.
    kept = AIMessage(content=text if len(text) <= CUT_REPLY_KEEP else text[:CUT_REPLY_KEEP] + " …[cut]",
                     response_metadata=cut_msg.response_metadata)
    request = HumanMessage(content=CONCLUDE_REQUEST)
    update = _model_turn(ctx, emit, [*messages, kept, request], iteration, final=True)
    earlier = [m for m in cut["messages"] if isinstance(m, ToolMessage)]  # masked before the cut reply
    update["messages"] = [*earlier, kept, request, *update.get("messages", [])]
    update["conclude_asked"] = True
    return update


def _as_tool_calls(msg: AIMessage, found: TextToolCalls) -> AIMessage:
    """The message with its text-form calls made real (ambiguous arguments become an invalid call to correct)."""
    invalid = []
    if found.ambiguous:
        invalid.append({"name": " or ".join(found.ambiguous), "args": message_text(msg), "id": "text_call_ambiguous",
                        "error": "the arguments were written as text without a tool name; call one of "
                                 f"{', '.join(found.ambiguous)} as a tool", "type": "invalid_tool_call"})
    return AIMessage(content=found.remainder, tool_calls=found.calls, invalid_tool_calls=invalid,
                     response_metadata=msg.response_metadata, usage_metadata=msg.usage_metadata, id=msg.id)


def _run_tool_calls(message: AIMessage, registry: ToolRegistry, ctx: RunContext, emit: Callable[[Event], None], *,
                    raise_internal_errors: bool = False) -> list[ToolMessage]:
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
        return run_tool(tool, args, ctx.settings, config, raise_internal_errors=raise_internal_errors)

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


def _reply(ctx: RunContext, emit: Callable[[Event], None], call_id: str, name: str,
           outcome: ToolOutcome) -> ToolMessage:
    emit(ToolResult(elapsed_s=ctx.elapsed(), call_id=call_id, name=name,
                    **(asdict(outcome) | {"duration_s": round(outcome.duration_s, 4)})))
    return ToolMessage(content=outcome.output, tool_call_id=call_id, name=name,
                       status="success" if outcome.ok else "error")


def _without_dangling_calls(messages: list[BaseMessage]) -> list[BaseMessage]:
    """Drop tool calls that were never answered (the cap hit before the tools ran): the API rejects them."""
    last = messages[-1] if messages else None
    if isinstance(last, AIMessage) and (last.tool_calls or last.invalid_tool_calls):
        text = message_text(last)
        return messages[:-1] + ([AIMessage(content=text)] if text.strip() else [])
    return messages


model_turn = _model_turn
"""One loop request as a ModelCall event: the public name other loops (the team's orchestrator) call."""
