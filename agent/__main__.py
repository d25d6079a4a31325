"""`python -m agent`: answer one question from the command line.

    python -m agent "What is 2**10 + 7?"                    # prints the final answer
    python -m agent --file report.xlsx --trace "question"   # also prints the step-by-step trace (stderr)
    python -m agent --json "question"                        # one JSON object: answer, source, steps, tokens,
                                                             # timings, trace
    python -m agent --max-iterations 40 "question"          # more assistant turns for this question (MAX_ITERATIONS)

Exit status: 0 answered, 1 the run failed (e.g. the model could not be reached), 2 bad usage or
configuration (e.g. no model configured and the knowledge base did not answer).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from agent.events import (
    AnswerExtracted,
    ContextMasked,
    ErrorEvent,
    Event,
    IterationCap,
    LedgerMade,
    ModelCall,
    ProgressChecked,
    RagLookup,
    Retry,
    RouteDecided,
    Solution,
    TokenBudgetExhausted,
    ToolCall,
    ToolResult,
    WorkerReported,
)
from command import UsageError, run_command
from config import Settings, load_settings, redact


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the process exit status."""
    parser = argparse.ArgumentParser(prog="python -m agent", description="Answer a GAIA-style question with the agent.")
    parser.add_argument("question", help="the question to answer")
    parser.add_argument("--file", help="path of an attached file (any GAIA type)")
    parser.add_argument("--task-id", help="GAIA task id (its own entry is left out of the RAG lookup)")
    parser.add_argument("--trace", action="store_true", help="print each step as it happens (to stderr)")
    parser.add_argument("--json", action="store_true", help="print one JSON object with answer, trace and figures")
    parser.add_argument("--no-rag", action="store_true", help="skip the knowledge-base lookup")
    parser.add_argument("--max-iterations", type=int, metavar="N",
                        help="assistant turns for this question (default MAX_ITERATIONS)")
    parser.add_argument("--strategy", choices=["react", "team"],
                        help="one ReAct loop, or an orchestrator delegating to workers (default AGENT_STRATEGY)")
    args = parser.parse_args(argv)
    return run_command(lambda: _answer(args, load_settings()))


def _answer(args: argparse.Namespace, settings: Settings) -> int:
    if args.max_iterations is not None and args.max_iterations < 1:
        raise UsageError(f"--max-iterations must be at least 1, not {args.max_iterations}")
    if args.file and not Path(args.file).expanduser().is_file():
        raise UsageError(f"--file {args.file}: no such file")

    from agent.pipeline import Pipeline  # after settings are known to be valid
    from application import Application

    with Application(settings) as app:  # this command's windows, endpoint checks, knowledge base, browsers
        events: list[Event] = []
        for event in Pipeline(settings, app=app).stream(args.question, args.file, args.task_id,
                                                        use_rag=not args.no_rag, confine=False,
                                                        max_iterations=args.max_iterations, strategy=args.strategy):
            events.append(event)
            if args.trace:
                print(format_event(event), file=sys.stderr, flush=True)
    solution = Solution.from_events(args.question, events, task_id=args.task_id,
                                    file_path=str(Path(args.file).expanduser().resolve()) if args.file else None)
    solution.strategy = args.strategy or settings.AGENT_STRATEGY
    if args.json:
        print(json.dumps(summary(solution), ensure_ascii=False, default=str))
    elif solution.answer or solution.error is None:
        print(solution.answer)
    if solution.error is not None and not solution.answer:
        _one_line_error(solution, settings, sys.stderr)
        configured = any(isinstance(e, ErrorEvent) and e.stage == "config" for e in events)
        return 2 if configured else 1
    return 0


def summary(solution: Solution) -> dict[str, Any]:
    """The --json object: answer, source, steps, tokens, timings and the full trace."""
    model_s = sum(e.latency_s for e in solution.events if isinstance(e, ModelCall))
    tools_s = sum(e.duration_s for e in solution.events if isinstance(e, ToolResult))
    rag_s = sum(e.duration_s for e in solution.events if isinstance(e, RagLookup))
    retry_s = sum(e.delay_s for e in solution.events if isinstance(e, Retry))
    return {
        "answer": solution.answer,
        "source": solution.source,
        "strategy": solution.strategy,
        "question": solution.question,
        "file_path": solution.file_path,
        "task_id": solution.task_id,
        "steps": solution.steps,
        "tools_used": solution.tools_used,
        "tokens": {"prompt": solution.prompt_tokens, "completion": solution.completion_tokens,
                   "total": solution.total_tokens},
        "timings": {"total_s": round(solution.elapsed_s, 4), "model_s": round(model_s, 4),
                    "tools_s": round(tools_s, 4), "rag_s": round(rag_s, 4), "retry_wait_s": round(retry_s, 4)},
        "retries": solution.retries,
        "hit_iteration_cap": solution.hit_iteration_cap,
        "budget_exhausted": solution.budget_exhausted,
        "cost_usd": solution.cost_usd,
        "error": solution.error,
        "trace": [e.to_dict() for e in solution.events],
    }


def format_event(event: Event) -> str:
    """One human-readable trace line; a team worker's lines start with its name."""
    line = _event_line(event)
    return f"{line[:11]} <{event.worker}>{line[11:]}" if event.worker else line


def _event_line(event: Event) -> str:
    t = f"[{event.elapsed_s:7.2f}s]"
    if (team := _team_line(event)) is not None:
        return f"{t} {team}"
    if isinstance(event, RagLookup):
        extra = f" sim={event.similarity:.3f}" if event.similarity else ""
        return f"{t} rag      {event.tier}{extra} {event.note}".rstrip()
    if isinstance(event, RouteDecided):
        return f"{t} route    {event.route}: {event.reason}"
    if isinstance(event, ModelCall):
        label = "final" if event.final else f"step {event.iteration}" if event.purpose == "agent" else event.purpose
        calls = ", ".join(f"{c.get('name')}({_brief(c.get('args'))})" for c in event.tool_calls)
        said = _brief(event.content, 160)
        what = f"calls {calls}" if calls else f"says {said!r}"
        return (f"{t} model    {label} ({event.latency_s:.2f}s, {event.prompt_tokens}+{event.completion_tokens} tok) "
                f"{what}")
    if isinstance(event, Retry):
        return (f"{t} retry    {event.attempt}/{event.max_retries} in {event.delay_s:g}s: {event.reason}")
    if isinstance(event, ToolCall):
        return f"{t} tool     {event.name}({_brief(event.args)})"
    if isinstance(event, ToolResult):
        status = "ok" if event.ok else f"failed ({event.error_kind})"
        return f"{t} result   {event.name} {status} in {event.duration_s:.2f}s: {_brief(event.output, 200)}"
    if isinstance(event, IterationCap):
        return f"{t} cap      MAX_ITERATIONS reached after {event.iterations} steps; asking for the best answer"
    if isinstance(event, TokenBudgetExhausted):
        return (f"{t} budget   {event.tokens_used:,} tokens used of MAX_TOKENS_PER_TASK={event.limit:,}; "
                "asking for the best answer")
    if isinstance(event, ContextMasked):
        return (f"{t} masked   {event.masked} old observation(s): ~{event.tokens_before:,} -> ~{event.tokens_after:,} "
                f"tokens (window {event.window:,}, {event.window_source})")
    if isinstance(event, AnswerExtracted):
        return f"{t} answer   {event.answer!r} (by {event.method})"
    if isinstance(event, ErrorEvent):
        return f"{t} error    [{event.stage}] {event.message}"
    return f"{t} {event.to_dict()['kind']}"


def _team_line(event: Event) -> str | None:
    """The team strategy's own events (agent.team), or None."""
    if isinstance(event, LedgerMade):
        return f"{'replan' if event.replan else 'ledger':8} {_brief(event.plan, 200)}"
    if isinstance(event, ProgressChecked):
        return (f"progress satisfied={event.satisfied} progress={event.progress} looping={event.looping} "
                f"stalls={event.stalls}")
    if isinstance(event, WorkerReported):
        return (f"report   {event.steps} step(s), {event.prompt_tokens + event.completion_tokens:,} tok, "
                f"{event.duration_s:.2f}s: {_brief(event.report, 200)}")
    return None


def _brief(value: Any, limit: int = 120) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _one_line_error(solution: Solution, settings: Settings, out: TextIO) -> None:
    message = " ".join(redact(solution.error or "failed", settings).split())
    print(f"error: {message}", file=out)


if __name__ == "__main__":
    sys.exit(main())
