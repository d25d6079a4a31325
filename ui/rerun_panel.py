"""The Debug tab's "Re-run this task" panel: edited settings, a button, the two traces side by side (ui.rerun)."""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import gradio as gr

from config import Settings
from ui.debug import attachment_for, traces_folder
from ui.rerun import RerunChoice, rerun_view
from ui.run_fields import iterations_field, run_iterations
from ui.runtime import Runtime
from ui.session import Session, public_text
from ui.strategy_field import run_strategy, strategy_field
from visitors.endpoints import admit

CHECK_CHOICES: tuple[Literal["on", "off"], ...] = ("on", "off")

TRACE_NAME = re.compile(r"trace-[\w-]{1,64}\.jsonl")


def trusted_trace(value: Any) -> str | None:
    """The trace file a re-run compares with, if it is one the Debug tab wrote (or gradio's copy of one).

    The value comes from the client: a path anywhere else (another file of the server) is refused.
    """
    if not value:
        return None
    path = Path(str(getattr(value, "path", value))).resolve()
    if not TRACE_NAME.fullmatch(path.name) or not path.is_file():
        return None
    roots = [traces_folder().resolve(), (Path(tempfile.gettempdir()) / "gradio").resolve()]
    return str(path) if any(path.is_relative_to(root) for root in roots) else None


@dataclass
class RerunPanel:
    """The panel's components."""

    model: Any
    strategy: Any
    iterations: Any
    answer_check: Any
    replay: Any
    button: Any
    view: Any


def rerun_choice(model: Any, strategy: Any, iterations: Any, answer_check: Any, replay: Any,
                 settings: Settings) -> RerunChoice:
    """The panel's values (untrusted: from the client) as a typed choice; a value out of range keeps the default."""
    check = next((name for name in CHECK_CHOICES if name == answer_check), None)
    return RerunChoice(model=str(model or "").strip()[:200], strategy=run_strategy(strategy),
                       max_iterations=run_iterations(iterations, settings), answer_check=check, replay=bool(replay))


def rerun_panel(settings: Settings) -> RerunPanel:
    """The panel's components (inside the Debug tab, under the trace)."""
    with gr.Accordion("Re-run this task with edited settings", open=False, elem_id="rerun-panel"):
        with gr.Row():
            model = gr.Textbox(value=settings.MODEL_NAME, label="Model", elem_id="rerun-model")
            strategy = strategy_field(settings, label="Strategy", elem_id="rerun-strategy")
            iterations = iterations_field(settings, label="Max iterations", elem_id="rerun-iterations")
            answer_check = gr.Radio(list(CHECK_CHOICES), value=settings.ANSWER_CHECK, label="Answer check",
                                    elem_id="rerun-answer-check")
            replay = gr.Checkbox(value=True, label="Replay the first run's tool calls", elem_id="rerun-replay")
        button = gr.Button("↺ Re-run this task", elem_id="rerun-task-btn")
        view = gr.HTML("", elem_id="rerun-view")
    return RerunPanel(model, strategy, iterations, answer_check, replay, button, view)


def wire_rerun(panel: RerunPanel, settings: Settings, runtime: Runtime, *, trace_file: Any, question: Any,
               upload: Any, task: Any, session: gr.State) -> None:
    """Connect the button: the last trace (its download file) against a fresh run of the same question."""

    def rerun(trace: Any, text: str, file: Any, picked: Any, model: str, strategy: Any, iterations: Any,
              answer_check: Any, replay: bool, visitor: Session, profile: gr.OAuthProfile | None = None) -> str:
        if (refused := admit("rerun_task", settings, profile).refusal) is not None:  # before any model request
            return f"<p>{refused}</p>"
        path, _ = attachment_for(file, picked)
        try:
            choice = rerun_choice(model, strategy, iterations, answer_check, replay, settings)
            return rerun_view(runtime, trusted_trace(trace), text, path, getattr(picked, "task_id", None), choice,
                              readable=visitor.readable)
        except Exception as exc:  # noqa: BLE001 - shown in place, secrets masked
            return f"<p>❌ {public_text(str(exc), settings)}</p>"

    panel.button.click(rerun, [trace_file, question, upload, task, panel.model, panel.strategy, panel.iterations,
                               panel.answer_check, panel.replay, session], panel.view, api_name="rerun_task",
                       concurrency_id="agent", concurrency_limit=settings.APP_CONCURRENCY)
