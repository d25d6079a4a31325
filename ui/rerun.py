"""The Debug tab's "Re-run this task": the same question with edited settings, the two traces side by side.

`first_divergence` (pure) finds the first step where two traces part; `side_by_side` renders both with that
row highlighted. With replay on, the first run's tool calls answer the re-run's matching calls (a tool cache
seeded from the first trace, tools.replay_cache), so a model or iteration change is tried on the same pages.
"""

from __future__ import annotations

import html
import json
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.events import AnswerExtracted, ErrorEvent, Event, ToolCall, ToolResult, event_from_dict
from tools.replay_cache import CachedResult, ToolCache

if TYPE_CHECKING:
    from config import Settings
    from ui.runtime import Runtime


def trace_steps(events: Sequence[Event]) -> list[str]:
    """One line per step a reader compares: each tool call with its arguments, the answer, an error."""
    steps: list[str] = []
    for event in events:
        if isinstance(event, ToolCall):
            steps.append(f"{event.name}({json.dumps(event.args, sort_keys=True, ensure_ascii=False, default=str)})")
        elif isinstance(event, AnswerExtracted):
            steps.append(f"answer: {event.answer}")
        elif isinstance(event, ErrorEvent):
            steps.append(f"error ({event.stage}): {event.message}")
    return steps


def first_divergence(a: Sequence[str], b: Sequence[str]) -> int | None:
    """The index of the first step where `a` and `b` differ (one ending early counts); None when identical."""
    for index, (left, right) in enumerate(zip(a, b, strict=False)):
        if left != right:
            return index
    return None if len(a) == len(b) else min(len(a), len(b))


def side_by_side(a: Sequence[str], b: Sequence[str], titles: tuple[str, str] = ("First run", "Re-run")) -> str:
    """An HTML table of both traces, one step a row, the first differing row highlighted."""
    split = first_divergence(a, b)
    head = ("identical traces" if split is None else f"the traces part at step {split + 1}")
    rows = [f"<p id='divergence'>{html.escape(head)}</p>", "<table id='rerun-traces'>",
            f"<tr><th>#</th><th>{html.escape(titles[0])}</th><th>{html.escape(titles[1])}</th></tr>"]
    for index in range(max(len(a), len(b))):
        left = a[index] if index < len(a) else ""
        right = b[index] if index < len(b) else ""
        mark = " class='diverges' style='background:#fde68a'" if index == split else ""
        rows.append(f"<tr{mark}><td>{index + 1}</td><td>{html.escape(left[:300])}</td>"
                    f"<td>{html.escape(right[:300])}</td></tr>")
    return "\n".join(rows + ["</table>"])


def read_trace(path: str | Path) -> list[Event]:
    """The events of a trace JSONL file written by the Debug tab (ui.debug.write_trace)."""
    events: list[Event] = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            events.append(event_from_dict(json.loads(line)))
    return events


def cache_from_trace(events: Sequence[Event], task_id: str | None, settings: Settings, folder: Path) -> ToolCache:
    """A tool cache in `folder` holding the trace's calls and results, for a re-run to replay from."""
    seed = ToolCache(settings, record_dir=folder)
    calls = {e.call_id: e for e in events if isinstance(e, ToolCall)}
    for result in (e for e in events if isinstance(e, ToolResult)):
        if (call := calls.get(result.call_id)) is not None:
            seed.keep(call.name, call.args, task_id,
                      CachedResult(result.output, result.ok, result.error_kind, result.truncated_chars))
    return ToolCache(settings, record_dir=None, replay_dir=folder)


def rerun_events(runtime: Runtime, first: Sequence[Event], question: str, file_path: str | None,
                 task_id: str | None, *, model: str, max_iterations: int | None, replay: bool,
                 readable: tuple[Path, ...] = ()) -> Iterator[Event]:
    """Run the question again with `model` and `max_iterations`, replaying the first run's calls if asked."""
    base = runtime.pipeline()
    settings = base.settings
    pipeline = base
    if model.strip() and model.strip() != settings.MODEL_NAME:
        from agent.pipeline import Pipeline

        pipeline = Pipeline(settings.model_copy(update={"MODEL_NAME": model.strip()}), registry=base.registry,
                            knowledge_base=base.knowledge_base, gate=base.gate, app=base.app)
    with tempfile.TemporaryDirectory(prefix="gaia-rerun-") as folder:
        cache = cache_from_trace(first, task_id, settings, Path(folder)) if replay else None
        yield from pipeline.stream(question, file_path=file_path, task_id=task_id, readable=readable,
                                   max_iterations=max_iterations, tool_cache=cache)


def rerun_view(runtime: Runtime, trace_file: Any, question: str, file_path: str | None, task_id: str | None,
               **options: Any) -> str:
    """The side-by-side HTML of the last trace and its re-run (or a line saying why there is none)."""
    if not trace_file:
        return "<p>Run the question first: the re-run is compared with its trace.</p>"
    first = read_trace(trace_file)
    again = list(rerun_events(runtime, first, question, file_path, task_id, **options))
    replayed = sum(1 for e in again if isinstance(e, ToolResult) and e.replayed)
    note = f"<p>{replayed} tool call(s) answered from the first run's record.</p>"
    return note + side_by_side(trace_steps(first), trace_steps(again))
