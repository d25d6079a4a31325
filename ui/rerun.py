"""The Debug tab's "Re-run this task": the same question with edited settings, the two traces side by side.

`first_divergence` (pure) finds the first step where two traces part; `side_by_side` renders both with that
row highlighted. With replay on, the first run's tool calls answer the re-run's matching calls (a tool cache
seeded from the first trace, tools.core.replay_cache), so a model or iteration change is tried on the same pages.
"""

from __future__ import annotations

import html
import json
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agent.events import (
    AnswerCheck,
    AnswerExtracted,
    ErrorEvent,
    Event,
    ModelCall,
    ToolCall,
    ToolResult,
    event_from_dict,
)
from tools.core.replay_cache import CachedResult, ToolCache

if TYPE_CHECKING:
    from agent.pipeline import Pipeline
    from config import Settings, Strategy
    from ui.runtime import Runtime


@dataclass(frozen=True)
class RerunChoice:
    """What a re-run changes (the panel's fields); an empty or None field keeps the server's setting."""

    model: str = ""
    """MODEL_NAME for the re-run ('' : the configured one)."""
    strategy: Strategy | None = None
    """react or team (None: AGENT_STRATEGY)."""
    max_iterations: int | None = None
    """The iteration cap (None: MAX_ITERATIONS)."""
    answer_check: Literal["on", "off"] | None = None
    """ANSWER_CHECK for the re-run (None: the configured one)."""
    replay: bool = True
    """Answer the re-run's tool calls that match the first run's from its record."""

    def updates(self, settings: Settings) -> dict[str, str]:
        """The settings this choice changes, as a `model_copy(update=...)` mapping (empty: none)."""
        changed: dict[str, str] = {}
        if self.model.strip() and self.model.strip() != settings.MODEL_NAME:
            changed["MODEL_NAME"] = self.model.strip()
        if self.answer_check is not None and self.answer_check != settings.ANSWER_CHECK:
            changed["ANSWER_CHECK"] = self.answer_check
        return changed

    def summary(self, settings: Settings) -> str:
        """The re-run's settings in a few words (the second column's title)."""
        return (f"{self.model.strip() or settings.MODEL_NAME}, {self.strategy or settings.AGENT_STRATEGY}, "
                f"{self.max_iterations or settings.MAX_ITERATIONS} iterations, "
                f"answer check {self.answer_check or settings.ANSWER_CHECK}, replay {'on' if self.replay else 'off'}")


def trace_steps(events: Sequence[Event]) -> list[str]:
    """One line per step a reader compares: each tool call with its arguments, the answer check, the answer, an error.

    A team run's delegations run at once, so their events interleave in any order: each worker's steps are
    placed right after its `delegate` call, in the order the orchestrator asked for them.
    """
    by_delegation: dict[str, list[Event]] = {}
    for event in events:
        if event.delegation:
            by_delegation.setdefault(event.delegation, []).append(event)
    placed: set[str] = set()
    steps: list[str] = []
    for event in events:
        if event.delegation:
            continue  # listed after its delegate call
        if isinstance(event, ModelCall):
            for call in event.tool_calls:
                if call.get("name") == "delegate" and (call_id := str(call.get("id") or "")) in by_delegation:
                    placed.add(call_id)
                    steps.append(_call_step("", "delegate", call.get("args") or {}))
                    steps += [line for e in by_delegation[call_id] if (line := _step(e)) is not None]
        elif not (isinstance(event, ToolCall) and event.call_id in placed) and (line := _step(event)) is not None:
            steps.append(line)
    return steps


def _call_step(worker: str | None, name: str, args: Any) -> str:
    who = f"{worker}: " if worker else ""  # a team worker's call (the team strategy)
    return f"{who}{name}({json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)})"


def _step(event: Event) -> str | None:
    if isinstance(event, ToolCall):
        return _call_step(event.worker, event.name, event.args)
    if isinstance(event, AnswerCheck):
        verdict = "accepted" if event.accepted else "kept the draft"
        return f"answer check: {event.before!r} -> {event.after!r} ({verdict})"
    if isinstance(event, AnswerExtracted):
        return f"answer: {event.answer}"
    if isinstance(event, ErrorEvent):
        return f"error ({event.stage}): {event.message}"
    return None


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


def rerun_pipeline(base: Pipeline, choice: RerunChoice) -> Pipeline:
    """The pipeline a re-run uses: `base` itself, or one with the choice's settings sharing its tools and gate."""
    updates = choice.updates(base.settings)
    if not updates:
        return base
    from agent.pipeline import Pipeline

    return Pipeline(base.settings.model_copy(update=updates), registry=base.registry,
                    knowledge_base=base.knowledge_base, gate=base.gate, app=base.app)


def rerun_events(runtime: Runtime, first: Sequence[Event], question: str, file_path: str | None,
                 task_id: str | None, choice: RerunChoice, *, readable: tuple[Path, ...] = ()) -> Iterator[Event]:
    """Run the question again with `choice`'s settings, replaying the first run's calls if it asks."""
    base = runtime.pipeline()
    pipeline = rerun_pipeline(base, choice)
    with tempfile.TemporaryDirectory(prefix="gaia-rerun-") as folder:
        cache = cache_from_trace(first, task_id, base.settings, Path(folder)) if choice.replay else None
        yield from pipeline.stream(question, file_path=file_path, task_id=task_id, readable=readable,
                                   max_iterations=choice.max_iterations, strategy=choice.strategy,
                                   tool_cache=cache)


def rerun_view(runtime: Runtime, trace_file: Any, question: str, file_path: str | None, task_id: str | None,
               choice: RerunChoice, readable: tuple[Path, ...] = ()) -> str:
    """The side-by-side HTML of the last trace and its re-run (or a line saying why there is none)."""
    if not trace_file:
        return "<p>Run the question first: the re-run is compared with its trace.</p>"
    first = read_trace(trace_file)
    again = list(rerun_events(runtime, first, question, file_path, task_id, choice, readable=readable))
    replayed = sum(1 for e in again if isinstance(e, ToolResult) and e.replayed)
    note = f"<p>{replayed} tool call(s) answered from the first run's record.</p>"
    titles = ("First run", f"Re-run ({choice.summary(runtime.settings)})")
    return note + side_by_side(trace_steps(first), trace_steps(again), titles)
