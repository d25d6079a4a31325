"""Debug tab logic: stream one question's trace, preview an attachment, look a question up in the KB.

Generators yield plain values; app.py wires them to components. The shared pipeline comes from the
`Runtime`; everything per request (the events so far, the picked task) lives in locals or `gr.State`.
"""

from __future__ import annotations

import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradio as gr

from agent.events import AnswerExtracted, ErrorEvent, Event, Solution
from config import Strategy
from evaluation.scorer import DEFAULT_SCORER, SCORERS, scorer_named
from tools.core.specs import previewable
from ui.background import Tick, iterate_until_stopped
from ui.runtime import AgentUnavailable, Runtime
from ui.session import public_text
from ui.text import shown
from ui.trace_view import clip, question_message, render_trace, verdict_message
from ui.waiting import Ticker

AskOutput = tuple[list[gr.ChatMessage], str, str, str | None]
"""(trace messages, final answer, verdict Markdown, path of the JSONL trace)."""

def _uploaded(file: Any) -> str | None:
    if not file:
        return None
    return str(file if isinstance(file, (str, Path)) else getattr(file, "name", file))


def attachment_for(file: Any, task: Any) -> tuple[str | None, str]:
    """The file a question goes with, and where it came from: a picked task's own file always wins.

    A picked GAIA task is scored against its own attachment (or none), so an upload left from an earlier
    question is never sent with it.
    """
    if task is not None:
        path = getattr(task, "file_path", None)
        return (str(path), "the task's file") if path else (None, "the task has no attachment")
    uploaded = _uploaded(file)
    return (uploaded, "uploaded") if uploaded else (None, "no attachment")


def attachment_line(file: Any, task: Any) -> str:
    """What the attachment line under the upload says: which file goes with the question, and why."""
    path, origin = attachment_for(file, task)
    if path is None:
        ignored = " (the upload is ignored)" if task is not None and _uploaded(file) else ""
        return f"📎 No attachment: {origin}{ignored}."
    ignored = " — the upload is ignored" if task is not None and _uploaded(file) else ""
    missing = " ⚠️ missing on disk" if not Path(path).is_file() else ""
    return f"📎 Attached: `{Path(path).name}` ({origin}{ignored}){missing}"


def loaded_message(samples: list[Any]) -> str:
    """The task picker's line after a load: how many tasks, and every attachment that is missing or refused."""
    lines = [f"Loaded {len(samples)} task(s). Pick one above."]
    missing = [s for s in samples if getattr(s, "attachment_missing", False)]
    refused = [s for s in samples if getattr(s, "attachment_error", "")]
    if missing:
        names = ", ".join(f"`{s.file_name}` (task {s.task_id[:8]})" for s in missing[:10])
        more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
        lines.append(f"⚠️ {len(missing)} attachment(s) missing on disk: {names}{more}. "
                     "Those tasks run without their file.")
    if refused:
        lines.append(f"⚠️ {len(refused)} attachment(s) refused: "
                     + "; ".join(shown(s.attachment_error) for s in refused[:5]))
    return "  \n".join(lines)


def _attachment(file: Any, task: Any) -> str | None:
    return attachment_for(file, task)[0]


TRACE_TTL_S = 3600.0
"""Trace files older than this are deleted when a new one is written (gradio serves its own copy)."""


_TRACES: list[Path] = []
"""This process's own trace folder (made on first use): private to its OS user, unlike a fixed /tmp name."""


def traces_folder() -> Path:
    """The folder trace files are written to: one `mkdtemp` folder per process (mode 0700)."""
    if not _TRACES or not _TRACES[0].is_dir():
        _TRACES[:] = [Path(tempfile.mkdtemp(prefix="gaia-traces-"))]
    return _TRACES[0]


def write_trace(solution: Solution, folder: Path | None = None) -> str:
    """Write the trace JSONL for the download button; return its path. Old trace files are pruned."""
    folder = folder or traces_folder()
    folder.mkdir(parents=True, exist_ok=True)
    now = time.time()
    for old in folder.glob("trace-*.jsonl"):
        try:
            if now - old.stat().st_mtime > TRACE_TTL_S:
                old.unlink()
        except OSError:
            pass  # another session pruned it first
    path = folder / f"trace-{(solution.task_id or 'question')[:36]}-{uuid.uuid4().hex[:8]}.jsonl"
    path.write_text(solution.trace_jsonl(), encoding="utf-8")
    return str(path)


STOPPED_NOTE = "Stopped by the user: the trace above is what ran so far; download it below."


def ask_stream(runtime: Runtime, question: str, file: Any = None, task: Any = None,
               use_rag: bool = True, stop: threading.Event | None = None,
               readable: tuple[Path, ...] = (), scorer: str = DEFAULT_SCORER,
               max_iterations: int | None = None, strategy: Strategy | None = None) -> Iterator[AskOutput]:
    """Run one question through the pipeline, yielding the rendered trace after every event.

    A picked task's answer is judged by the `SCORERS` entry `scorer`. When `stop` is set the trace ends
    with a "stopped" note and the partial trace is offered for download.
    """
    question = (question or "").strip()
    if not question:
        yield [gr.ChatMessage(role="assistant", content="Type a question (or pick a GAIA task) first.")], "", "", None
        return
    if scorer not in SCORERS:  # before any model request
        yield [gr.ChatMessage(role="assistant", content=f"❌ Unknown scorer: choose one of {', '.join(SCORERS)}.")], \
            "", "", None
        return
    path = _attachment(file, task)
    head = [question_message(question, Path(path).name if path else None)]
    if not runtime.ready.is_set():
        yield head + [gr.ChatMessage(role="assistant", content="⏳ Waiting for the agent to finish loading…",
                                     metadata={"title": "Loading", "status": "pending"})], "", "", None
    try:
        pipeline = runtime.pipeline()
    except AgentUnavailable as exc:
        yield head + [gr.ChatMessage(role="assistant", content=f"❌ {shown(exc)}")], "", "", None
        return

    task_id = getattr(task, "task_id", None)
    events: list[Event] = []
    answer = ""
    ticker = Ticker(runtime.settings.MODEL_NAME, runtime.settings.LLM_TIMEOUT, runtime.settings.TOOL_TIMEOUT)
    try:
        stop = stop or threading.Event()
        for event in iterate_until_stopped(
                lambda: pipeline.stream(question, file_path=path, task_id=task_id, use_rag=use_rag,
                                        readable=readable, max_iterations=max_iterations, strategy=strategy),
                stop, poll_s=0.5, ticks=True):
            if not isinstance(event, Tick):
                events.append(event)
                ticker.event()
            if isinstance(event, AnswerExtracted):
                answer = event.answer
            yield head + render_trace(events) + ticker.note(events), answer, "", None
    except Exception as exc:  # noqa: BLE001 - the trace so far stays visible with the failure under it
        events.append(ErrorEvent(stage="app", message=f"{type(exc).__name__}: {exc}",
                                 elapsed_s=events[-1].elapsed_s if events else 0.0))
    stopped = stop is not None and stop.is_set()
    if stopped:
        events.append(ErrorEvent(stage="stopped", message=STOPPED_NOTE,
                                 elapsed_s=events[-1].elapsed_s if events else 0.0))
    solution = Solution.from_events(question, events, task_id=task_id, file_path=path)
    shown_verdict, verdict = _verdict(solution, task, scorer, stopped)
    messages = head + render_trace(events) + ([shown_verdict] if shown_verdict is not None else [])
    yield messages, solution.answer, verdict, write_trace(solution)


def _verdict(solution: Solution, task: Any, scorer: str, stopped: bool) -> tuple[gr.ChatMessage | None, str]:
    """The verdict message for the chat (a picked task's score) and the verdict box's text."""
    if stopped:
        return None, "⏹️ Stopped: no verdict (the partial trace is downloadable)."
    if task is not None and getattr(task, "has_answer", False):
        expected = str(getattr(task, "final_answer", ""))
        message = verdict_message(scorer_named(scorer)(solution.answer, expected), expected)
        return message, str(message.content)
    if solution.error and not solution.answer:
        return None, f"❌ {shown(solution.error)}"
    return None, ""


def preview_attachment(runtime: Runtime, file: Any, task: Any = None, readable: tuple[Path, ...] = ()) -> str:
    """Markdown preview of an attachment, produced by the tool the agent would use on it (no model needed)."""
    path = _attachment(file, task)
    if not path:
        problem = getattr(task, "attachment_error", "")
        return f"❌ {problem}" if problem else "Upload a file (or pick a task with an attachment) to preview it."
    try:
        registry = runtime.registry()
    except AgentUnavailable as exc:
        return f"❌ {shown(exc)}"
    from tools.core.routes import route_for

    route = route_for(path, registry.names)
    # Tools that run code or call a model are not previewable (the budgeted worker has no key either).
    candidates = [t for t in route.tools if previewable(t) and registry.get(t) is not None]
    if not candidates and registry.get("read_file") is not None:
        candidates = ["read_file"]
    if not candidates:
        missing = "; ".join(f"{t}: {registry.missing[t]}" for t in route.tools if t in registry.missing)
        return f"No tool can preview this {route.file_type} file here. {missing}".strip()
    name = candidates[0]
    from visitors.jobs import run_job

    # In a budgeted subprocess with a workspace of its own, confined like a run (the file, the session's uploads).
    job = run_job(runtime.settings, "preview", {"tool": name, "path": path, "readable": [str(p) for p in readable]})
    if not job.ok:
        return f"❌ `{name}` on **{Path(path).name}**: {shown(public_text(job.refusal, runtime.settings))}"
    mark = "✅" if job.value["ok"] else "❌"
    body = clip(public_text(job.value["output"], runtime.settings), 6000).replace("```", "ʼʼʼ")  # no server paths
    return (f"{mark} `{name}` on **{Path(path).name}** ({route.file_type}, {job.value['duration_s']:.2f}s)\n\n"
            f"```\n{body}\n```")


def rag_lookup(runtime: Runtime, question: str, task: Any = None, may_spend: bool = True) -> str:
    """Markdown of the knowledge-base lookup for a question; without answers or hints unless `may_spend`."""
    question = (question or "").strip()[: runtime.settings.MAX_QUESTION_CHARS]
    if not question:
        return "Type a question first."
    try:
        kb = runtime.knowledge_base()
        if not may_spend:  # checked before any hint model request: similarity only, no stored answer shown
            from visitors.hidden_answers import lookup_without_answers

            return lookup_without_answers(kb, question, getattr(task, "task_id", None), runtime.settings.RAG_TOP_K)
        result = kb.lookup(question, exclude_task_id=getattr(task, "task_id", None))
    except Exception as exc:  # noqa: BLE001 - an index problem is shown, not raised
        return f"❌ RAG lookup failed: {type(exc).__name__}: {shown(exc)}"
    lines = [f"**Tier: {result.tier}**" + (f" — answer: **{result.answer}**" if result.answer else "")]
    if result.note:
        lines.append(result.note)
    if result.matches:
        lines.append("| similarity | stored question | answer |\n| ---: | --- | --- |")
        for m in result.matches:
            q = " ".join(m.question.split())[:150].replace("|", "\\|")
            a = str(m.answer).replace("|", "\\|")
            lines[-1] += f"\n| {m.similarity:.3f} | {q} | {a} |"
    else:
        lines.append("No stored question is similar.")
    return "\n\n".join(lines)
