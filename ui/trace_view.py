"""Render typed trace events as chat messages: one collapsible step per route, lookup, model or tool call.

Pure functions of the event list (the handler re-renders the whole list after each new event), so a
tool call shows a spinner until its result arrives and two sessions can never share a half-built trace.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import gradio as gr
from gradio.components.chatbot import MetadataDict

from agent.events import (
    AnswerCheck,
    AnswerExtracted,
    ContextMasked,
    ErrorEvent,
    Event,
    HistoryTrimmed,
    IterationCap,
    ModelCall,
    RagLookup,
    Retry,
    RouteDecided,
    TokenBudgetExhausted,
    ToolCall,
    ToolResult,
)
from evaluation.scorer import Score, scorer_label
from ui.text import shown

_THUMBNAIL = re.compile(r"data:image/(?:jpeg|png);base64,[A-Za-z0-9+/=]+")
MAX_SHOWN = 3000
"""Characters of a tool output or model message shown in one step (the JSONL trace keeps everything)."""


def clip(text: str, limit: int = MAX_SHOWN) -> str:
    """Cut long text for display, saying how much was left out."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… [{len(text) - limit} more characters in the downloadable trace]"


def _fence(text: str, lang: str = "") -> str:
    # A longer fence than any backtick run inside keeps tool output from breaking the Markdown.
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{lang}\n{text}\n{ticks}"


def _step(title: str, content: str, *, duration: float | None = None, pending: bool = False,
          log: str | None = None) -> gr.ChatMessage:
    meta: MetadataDict = {"title": title, "status": "pending" if pending else "done"}
    if duration is not None:
        meta["duration"] = round(float(duration), 2)
    if log:
        meta["log"] = log
    return gr.ChatMessage(role="assistant", content=content or "(empty)", metadata=meta)


def route_message(ev: RouteDecided) -> gr.ChatMessage:
    """The router's decision."""
    lines = [ev.reason]
    if ev.file_path:
        lines.append(f"Attachment: `{ev.file_path}` ({ev.file_type or 'unknown type'})")
    if ev.tool_hint:
        lines.append(f"Tool hint: `{ev.tool_hint}`")
    return _step(f"🧭 Route: {ev.route}", "\n\n".join(lines))


def rag_message(ev: RagLookup) -> gr.ChatMessage:
    """A knowledge-base lookup with its similarity and tier."""
    title = f"📚 RAG lookup: {ev.tier}"
    if ev.tier not in ("off",) and ev.similarity:
        title += f" (similarity {ev.similarity:.3f})"
    lines = []
    if ev.matched_question:
        lines.append(f"Nearest question: {clip(ev.matched_question, 500)}")
    if ev.answer is not None:
        lines.append(f"Stored answer: **{ev.answer}**")
    if ev.excluded_task_id:
        lines.append(f"Left out (same task): `{ev.excluded_task_id}`")
    if ev.note:
        lines.append(ev.note)
    return _step(title, "\n\n".join(lines) or "no stored question is similar", duration=ev.duration_s)


def model_message(ev: ModelCall) -> gr.ChatMessage:
    """One model request: tokens, latency, what it said and which tools it asked for."""
    purpose = ev.purpose
    if purpose != "agent":
        label = f"helper model call ({purpose})"
    else:
        label = "final best-effort call" if ev.final else f"model call #{ev.iteration}"
    title = f"🤖 {label} · {ev.prompt_tokens}+{ev.completion_tokens} tokens"
    if ev.cost_usd:
        title += f" · ${ev.cost_usd:.4f}"
    parts = []
    if ev.content.strip():
        parts.append(clip(ev.content))
    if ev.tool_calls:
        names = ", ".join(f"`{c.get('name', '?')}`" for c in ev.tool_calls)
        parts.append(f"Requested tools: {names}")
    return _step(title, "\n\n".join(parts) or "(no text)", duration=ev.latency_s, log=ev.model)


def retry_message(ev: Retry) -> gr.ChatMessage:
    """A retried model request (rate limit, server error, timeout)."""
    code = f" HTTP {ev.status_code}" if ev.status_code else ""
    content = f"{ev.reason}\n\nWaiting {ev.delay_s:.1f}s before attempt {ev.attempt + 1}."
    if ev.retry_after_s is not None:
        content += f" (server asked for Retry-After {ev.retry_after_s:g}s)"
    return _step(f"⏳ Retry {ev.attempt}/{ev.max_retries}{code}", content, duration=ev.delay_s)


def tool_message(call: ToolCall | None, result: ToolResult | None) -> gr.ChatMessage:
    """A tool call with its arguments, and its result once it arrived (spinner until then)."""
    name = call.name if call else result.name if result else "?"
    parts = []
    if call is not None:
        parts.append("Arguments:\n"
                     + _fence(clip(json.dumps(call.args, ensure_ascii=False, indent=2, default=str)), "json"))
    if result is None:
        return _step(f"🛠️ {name} …", "\n\n".join(parts), pending=True)
    mark = "✅" if result.ok else "❌"
    label = "Result" if result.ok else f"Failed ({result.error_kind or 'error'})"
    url = browser_url(name, result.output)
    if url:
        parts.insert(0, f"Page: {url}")
    if result.thumbnail:
        parts.append(thumbnail_html(result.thumbnail))
    parts.append(f"{label}:\n" + _fence(clip(result.output)))
    if result.truncated_chars:
        parts.append(f"_{result.truncated_chars} characters were cut before the model saw them._")
    title = f"{mark} {name}" + (f" · {clip(url, 80)}" if url else "")
    return _step(title, "\n\n".join(parts), duration=result.duration_s)


def browser_url(tool_name: str, output: str) -> str | None:
    """The page a browser step ended on (its reply's `URL:` line, or the screenshot's page), else None."""
    if not tool_name.startswith("browser_"):
        return None
    first = output.split("\n", 1)[0]
    if first.startswith("URL: "):
        return first[5:].strip()
    if first.startswith("Screenshot of "):
        return first[len("Screenshot of "):].split(" ", 1)[0]
    return None


def thumbnail_html(data_url: str) -> str:
    """A small screenshot of what a browser step saw, collapsed until opened."""
    if not _THUMBNAIL.fullmatch(data_url):  # only our own JPEG/PNG data URLs go into the HTML
        return ""
    return (f'<details><summary>🖼️ screenshot</summary><img src="{data_url}" alt="what the browser showed" '
            'style="max-width:320px"></details>')


def masked_message(ev: ContextMasked) -> gr.ChatMessage:
    """A masking step: how many old observations became stubs, and the request's size before and after."""
    why = "the server refused the request as too long" if ev.reason == "overflow" else \
        "the request would not fit what the window leaves for the reply (or passed CONTEXT_MASK_RATIO)"
    content = (f"{ev.masked} older tool observation(s) replaced by their first line and a `read_file` call "
               f"({ev.total_masked} so far): ~{ev.tokens_before:,} → ~{ev.tokens_after:,} prompt tokens; "
               f"window {ev.window:,} tokens ({ev.window_source}); {why}.")
    if ev.cut:
        content += (f" {ev.cut} newest observation(s) too long for the window: cut at the end, with the "
                    "`read_file` call of the whole text.")
    if ev.paths:
        more = " …" if len(ev.paths) > 5 else ""
        content += "\n\nKept in full: " + ", ".join(f"`{p}`" for p in ev.paths[:5]) + more
    return _step(f"🗜️ Context masked: {ev.masked} observation(s)", content)


ANSWER_PREFIX = "**Final answer:** "


def answer_messages(ev: AnswerExtracted, prefix: str = ANSWER_PREFIX) -> list[gr.ChatMessage]:
    """The raw final message (collapsed) and the extracted answer (plain, always visible)."""
    raw = _step(f"📝 Final message (extracted by: {ev.method})", clip(ev.raw) if ev.raw.strip() else "(empty)")
    answer = gr.ChatMessage(role="assistant", content=f"{prefix}{ev.answer or '(no answer)'}")
    return [raw, answer]


def check_message(ev: AnswerCheck) -> gr.ChatMessage:
    """The answer check: the draft, the checker's proposal, and whether it became the answer and why."""
    if ev.accepted and ev.after != ev.before:
        title = f"🔎 Answer check: `{clip(ev.before, 60)}` → `{clip(ev.after, 60)}`"
    else:
        title = "🔎 Answer check: draft kept"
    body = (f"Draft: `{ev.before}`\n\nProposed: `{ev.after}`\n\n"
            f"{'Accepted' if ev.accepted else 'Rejected'}: {shown(ev.reason)}") if ev.after else shown(ev.reason)
    return _step(title, body)


def render_event(ev: Event, answer_prefix: str = ANSWER_PREFIX) -> list[gr.ChatMessage]:
    """Messages for one event that does not need pairing (everything but tool calls/results)."""
    match ev:
        case RouteDecided():
            return [route_message(ev)]
        case RagLookup():
            return [rag_message(ev)]
        case ModelCall():
            return [model_message(ev)]
        case Retry():
            return [retry_message(ev)]
        case IterationCap():
            return [_step(f"⚠️ Iteration cap reached ({ev.iterations})",
                          "MAX_ITERATIONS reached: one last call without tools asks for the best answer.")]
        case ContextMasked():
            return [masked_message(ev)]
        case TokenBudgetExhausted():
            return [_step(f"⚠️ Token budget reached ({ev.tokens_used:,} of {ev.limit:,})",
                          "MAX_TOKENS_PER_TASK passed: no further tool call; one last call asks for the best answer.")]
        case HistoryTrimmed():
            return [_step(f"✂️ {ev.dropped} older chat message(s) not sent to the model",
                          f"Only the newest {ev.kept} message(s) of the conversation went with this question "
                          f"(at most {ev.max_turns} messages and {ev.max_chars:,} "
                          "characters: CHAT_HISTORY_MAX_TURNS, CHAT_HISTORY_MAX_CHARS).")]
        case AnswerCheck():
            return [check_message(ev)]
        case AnswerExtracted():
            return answer_messages(ev, answer_prefix)
        case ErrorEvent(stage="stopped"):
            return [gr.ChatMessage(role="assistant", content=f"⏹️ **Stopped:** {shown(ev.message)}")]
        case ErrorEvent():
            return [gr.ChatMessage(role="assistant", content=f"❌ **Error ({ev.stage}):** {shown(ev.message)}")]
        case _:
            return [_step(f"• {type(ev).__name__}", _fence(ev.to_json(), "json"))]


def render_trace(events: Sequence[Event], answer_prefix: str = ANSWER_PREFIX) -> list[gr.ChatMessage]:
    """All messages for the events so far; a tool call and its result become one step.

    `answer_prefix` precedes the extracted answer (the chat tab shows the bare answer). A team run's trace
    (`ui.team_view`) shows its ledger, progress checks and one collapsible section per delegation.
    """
    from ui.team_view import is_team_trace, render_team  # ui.team_view renders its plain parts with this function

    if is_team_trace(events):
        return render_team(events, lambda plain: _render_plain(plain, answer_prefix))
    return _render_plain(events, answer_prefix)


def _render_plain(events: Sequence[Event], answer_prefix: str) -> list[gr.ChatMessage]:
    messages: list[gr.ChatMessage] = []
    open_calls: dict[str, tuple[int, ToolCall]] = {}
    for ev in events:
        match ev:
            case ToolCall():
                open_calls[ev.call_id] = (len(messages), ev)
                messages.append(tool_message(ev, None))
            case ToolResult() if ev.call_id in open_calls:
                index, call = open_calls.pop(ev.call_id)
                messages[index] = tool_message(call, ev)
            case ToolResult():
                messages.append(tool_message(None, ev))
            case _:
                messages.extend(render_event(ev, answer_prefix))
    return messages


def verdict_message(score: Score, expected: str) -> gr.ChatMessage:
    """Correct or not for a known task, by which scorer, with the official rules' view of the answer."""
    head = f"✅ **Correct** (expected: {expected})" if score.correct else f"❌ **Wrong** — expected: **{expected}**"
    details = [f"scorer: {scorer_label(score.scorer)}"]
    if (explanation := score.explanation) is not None:
        details += [f"rule: `{explanation.rule}`", f"normalized answer: `{explanation.normalized_answer}`",
                    f"normalized truth: `{explanation.normalized_truth}`"]
        if score.format_only_miss:
            details.append("format-only miss: the content matches, the format does not")
        if explanation.lenient_reason:
            details.append(f"lenient match: {explanation.lenient_reason}")
    if score.note:
        details.append(score.note)
    return gr.ChatMessage(role="assistant", content=head + "\n\n" + " · ".join(details))


def question_message(question: str, file_name: str | None = None) -> gr.ChatMessage:
    """The asked question as the first (user) message."""
    text = question if not file_name else f"{question}\n\n📎 `{file_name}`"
    return gr.ChatMessage(role="user", content=text)
