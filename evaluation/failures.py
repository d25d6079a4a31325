"""What a task's trace says: why a wrong answer went wrong, and a short readable summary of the steps.

Categories (checked in this order, the first that fits wins):
- `correct`;
- `llm_error` — the run ended with an error (the model failed after retries, no endpoint) and no answer;
- `format_only_miss` — a lenient comparison (order, units, articles, number words) would have matched;
- `iteration_cap` — MAX_ITERATIONS cut the loop and a forced best-effort answer was wrong;
- `tool_failed` — a tool call failed, or no tool able to read the attachment was ever called;
- `no_tool_result_used` — the agent answered without a single successful tool result;
- `plain_wrong` — tools worked, the reasoning did not.
Tasks without ground truth get `unscored` (or `llm_error` when they ended in an error).
"""

from __future__ import annotations

import json
from typing import Any

from agent.events import ModelCall, RouteDecided, Solution, ToolCall, ToolResult
from config import Settings, redact
from evaluation.records import FailureCategory
from evaluation.scorer import Score
from tools.core.routes import route_for


def failure_category(solution: Solution, score: Score | None) -> FailureCategory:
    """The category of one task's outcome (see the module docstring); `score` None = no ground truth."""
    if score is not None and score.correct:
        return "correct"
    if solution.error and not (solution.answer or "").strip():
        return "llm_error"
    if score is None:
        return "unscored"
    if score.format_only_miss:
        return "format_only_miss"
    if solution.hit_iteration_cap:
        return "iteration_cap"
    if solution.source == "rag":
        return "plain_wrong"
    results = [e for e in solution.events if isinstance(e, ToolResult)]
    called = {e.name for e in solution.events if isinstance(e, ToolCall)}
    if any(not r.ok for r in results) or _attachment_never_read(solution, called):
        return "tool_failed"
    if not any(r.ok for r in results):
        return "no_tool_result_used"
    return "plain_wrong"


def _attachment_never_read(solution: Solution, called: set[str]) -> bool:
    """True when the task had an attachment and none of the tools able to read it was called."""
    for event in solution.events:
        if isinstance(event, RouteDecided) and event.file_path:
            readers = set(route_for(event.file_path).tools) | ({event.tool_hint} if event.tool_hint else set())
            return not (readers & called)
    return False


def _short(text: object, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _args(args: dict[str, Any], limit: int = 100) -> str:
    try:
        rendered = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False, default=str)}" for k, v in args.items())
    except (TypeError, ValueError):
        rendered = str(args)
    return _short(rendered, limit)


def reasoning_summary(solution: Solution, settings: Settings, *, limit: int = 2000) -> str:
    """A few readable lines: route, each tool call with its outcome, the final raw message, any error.

    Secrets are masked; each piece is shortened so the whole stays under `limit` characters.
    """
    lines: list[str] = []
    calls: dict[str, ToolCall] = {}
    step = 0
    for event in solution.events:
        if isinstance(event, RouteDecided):
            lines.append(f"route: {event.route} ({_short(event.reason, 160)})")
        elif isinstance(event, ToolCall):
            calls[event.call_id] = event
        elif isinstance(event, ToolResult):
            step += 1
            call = calls.get(event.call_id)
            args = _args(call.args) if call else ""
            status = "ok" if event.ok else f"failed ({event.error_kind or 'error'})"
            lines.append(f"{step}. {event.name}({args}) -> {status}: {_short(event.output, 160)}")
        elif isinstance(event, ModelCall) and event.final:
            lines.append("MAX_TOKENS_PER_TASK passed: best-effort answer requested" if solution.budget_exhausted
                         else "iteration cap reached: best-effort answer requested")
    if solution.raw_final:
        lines.append(f"final message: {_short(solution.raw_final, 400)}")
    lines.append(f"answer: {_short(solution.answer, 200)!r} (source {solution.source}, {solution.steps} model steps)")
    if solution.error:
        lines.append(f"error: {_short(solution.error, 300)}")
    text = redact("\n".join(lines), settings)
    return text if len(text) <= limit else text[: limit - 1] + "…"
