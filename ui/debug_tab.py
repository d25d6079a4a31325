"""The "Debug one question" tab: a question (free or a picked GAIA task), its live trace, answer and verdict."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import gradio as gr

from config import Settings
from evaluation.scorer import DEFAULT_SCORER
from ui.background import AskControl
from ui.batch import FOLDER_HELP, SCORER_CHOICES, load_samples
from ui.debug import AskOutput, ask_stream, attachment_line, loaded_message, preview_attachment, rag_lookup
from ui.forms import LEVELS, SOURCE_LABELS, AskForm, FormError, PickForm, source_of
from ui.rerun_panel import rerun_panel, wire_rerun
from ui.run_fields import iterations_field, run_iterations
from ui.runtime import Runtime
from ui.session import Session, local_folder_refusal, public_text
from ui.strategy_field import run_strategy, strategy_field
from ui.tab import FunctionTab
from ui.tables import SAMPLE_HEADERS, parse_task_ids, sample_rows, task_choices
from ui.text import shown
from ui.waiting import call_with_notes
from visitors.endpoints import admit
from visitors.hidden_answers import load_local_tasks, without_answers

FREE_QUESTION = "No GAIA task picked: a free question."


def _lookup_note(waited_s: float) -> str:
    return (f"⏳ Looking the question up in the knowledge base — {waited_s:.0f} s so far (the first lookup loads "
            "the embedding model and the index).")


@dataclass
class DebugTab:
    """The tab's components that events read or write."""

    task: Any
    control: Any
    samples: Any
    question: Any
    upload: Any
    attached: Any
    use_rag: Any
    task_info: Any
    ask_btn: Any
    stop_btn: Any
    preview_btn: Any
    rag_btn: Any
    side: Any
    pick_source: Any
    pick_split: Any
    pick_level: Any
    pick_dir: Any
    load_btn: Any
    task_pick: Any
    task_table: Any
    trace: Any
    answer: Any
    verdict: Any
    trace_file: Any
    scorer: Any = None
    scorer_pick: Any = None
    """The session's scorer pick, as State: the `ask` API keeps its inputs."""
    max_iterations: Any = None
    iterations_state: Any = None
    """The session's iteration cap, as State for the same reason."""
    strategy: Any = None
    strategy_state: Any = None
    """The session's strategy pick (issue 32), as State for the same reason."""


def _layout(settings: Settings) -> DebugTab:
    """The tab's components (inside its `gr.Tab`)."""
    task = gr.State(None)          # the picked GAIA task (a Sample) of this session
    control = gr.State(AskControl())  # per session: the running question's stop flag
    samples = gr.State([])         # the loaded split of this session
    with gr.Row():
        with gr.Column(scale=3):
            question = gr.Textbox(label=f"Question (up to {settings.MAX_QUESTION_CHARS:,} characters)", lines=3,
                                  placeholder="Ask a GAIA-style question…", elem_id="question")
            with gr.Row():
                with gr.Column():
                    upload = gr.File(label=f"Attachment (optional, up to {settings.MAX_UPLOAD_MB:g} MB)",
                                     type="filepath", height=110, elem_id="upload")
                    attached = gr.Markdown(attachment_line(None, None), elem_id="attached")
                with gr.Column():
                    use_rag = gr.Checkbox(value=settings.RAG_ENABLED, label="Use the RAG knowledge base")
                    scorer = gr.Dropdown(SCORER_CHOICES, value=DEFAULT_SCORER, elem_id="debug-scorer",
                                         label="Scorer (a picked task's verdict)")
                    max_iterations = iterations_field(settings, elem_id="max-iterations",
                                                      label="Max iterations (this question)")
                    strategy = strategy_field(settings, elem_id="strategy",
                                              label="Strategy (react: one loop · team: orchestrator and workers)")
                    task_info = gr.Markdown(FREE_QUESTION, elem_id="task-info", label="Task")
            with gr.Row():
                ask_btn = gr.Button("▶ Run", variant="primary", elem_id="ask-btn")
                stop_btn = gr.Button("■ Stop", variant="stop", elem_id="stop-btn")
                preview_btn = gr.Button("👁 Preview attachment", elem_id="preview-btn")
                rag_btn = gr.Button("📚 RAG lookup only", elem_id="rag-btn")
            # Right under the buttons that fill it, so the preview or lookup appears where the user looks.
            side = gr.Markdown("", elem_id="side-output", label="Preview / lookup", container=True,
                               min_height=40)
        with gr.Column(scale=2), gr.Accordion("Pick a task from a GAIA split", open=False):
            pick_source = gr.Radio([SOURCE_LABELS["local"], SOURCE_LABELS["hub"]], value=SOURCE_LABELS["local"],
                                   label="Source")
            with gr.Row():
                pick_split = gr.Dropdown(["validation", "test"], value="validation", label="Split")
                pick_level = gr.Dropdown(LEVELS, value="All", label="Level")
            pick_dir = gr.Textbox(label="Local GAIA folder", elem_id="pick-dir",
                                  placeholder="/path/to/GAIA (has 2023/validation/)")
            load_btn = gr.Button("Load tasks", elem_id="load-btn")
            task_pick = gr.Dropdown(choices=[], label="Task", interactive=True, elem_id="task-pick")
            task_table = gr.Dataframe(headers=SAMPLE_HEADERS, interactive=False, max_height=240,
                                      label="Tasks")
    trace = gr.Chatbot(label="Live trace", height=560, elem_id="trace", buttons=["copy", "copy_all"],
                       placeholder="The route, RAG lookup, model calls and tool calls appear here live.")
    with gr.Row():
        answer = gr.Textbox(label="Final answer", elem_id="answer", scale=2)
        verdict = gr.Markdown(elem_id="verdict", label="Verdict")
        trace_file = gr.DownloadButton("⬇ Download trace (JSONL)", value=None, scale=1, elem_id="trace-download")
    return DebugTab(task, control, samples, question, upload, attached, use_rag, task_info, ask_btn, stop_btn,
                    preview_btn, rag_btn, side, pick_source, pick_split, pick_level, pick_dir, load_btn, task_pick,
                    task_table, trace, answer, verdict, trace_file, scorer, gr.State(DEFAULT_SCORER), max_iterations,
                    gr.State(None), strategy, gr.State(settings.AGENT_STRATEGY))


def pick_task(task_id: str | None, loaded: list[Any] | None) -> tuple[Any, ...]:
    """The picked task fills the question and the task line; the upload is cleared."""
    chosen = next((s for s in loaded or [] if s.task_id == task_id), None)
    if chosen is None:
        return gr.Textbox(), None, FREE_QUESTION, None, attachment_line(None, None)
    expected = chosen.final_answer if chosen.has_answer else "? (test split)"
    attach = f" · attachment: `{chosen.file_name}`" if chosen.file_name else ""
    info = f"**Task** `{chosen.task_id}` · level {chosen.level}{attach} · expected: **{expected}**"
    # The upload is cleared: the task's own file goes with it (attachment_for), and the line says which.
    return chosen.question, chosen, info, None, attachment_line(None, chosen)

def free_question(file: Any) -> tuple[Any, ...]:
    """Typing a question of one's own un-picks the task."""
    return None, FREE_QUESTION, attachment_line(file, None)


def _picked_tasks(settings: Settings, form: PickForm, local: bool) -> list[Any]:
    """The tasks the pick form names; a local folder (maybe a visitor's upload) loads in the budgeted worker."""
    request = form.batch_form().request(parse_task_ids)
    if not local:
        return load_samples(request, settings)  # the hub: GAIA's own files
    if not request.data_dir.strip():
        raise FormError(FOLDER_HELP)
    return load_local_tasks(settings, request.split, request.level, request.data_dir)


def build_debug_tab(demo: gr.Blocks, settings: Settings, runtime: Runtime, session: gr.State) -> DebugTab:
    """The tab's components and their events (inside the caller's `gr.Blocks`)."""
    with gr.Tab(DEBUG_TAB.title, id=DEBUG_TAB.id):
        t = _layout(settings)
        panel = rerun_panel(settings)
    wire_rerun(panel, settings, runtime, trace_file=t.trace_file, question=t.question, upload=t.upload, task=t.task,
               session=session)
    # The re-run starts from the run's own strategy and cap: only what the user edits differs.
    t.strategy.change(lambda value: value, t.strategy, panel.strategy, api_visibility="private", queue=False)
    t.max_iterations.change(lambda value: value, t.max_iterations, panel.iterations, api_visibility="private",
                            queue=False)

    def ask(question: str, file: Any, picked_task: Any, use_rag: bool, scorer_name: str | None,
            control_state: AskControl | None, visitor: Session, iterations: Any = None, strategy: Any = None,
            profile: gr.OAuthProfile | None = None) -> Iterator[AskOutput]:
        form = AskForm(question, file, picked_task, use_rag)
        if (refused := admit("ask", settings, profile).refusal) is not None:  # before any model request
            yield [gr.ChatMessage(role="assistant", content=refused)], "", refused, None
            return
        visitor.note_upload(form.file)
        stop = control_state.begin() if control_state is not None else None
        try:
            yield from ask_stream(runtime, form.question, form.file, form.task, form.use_rag, stop=stop,
                                  readable=visitor.readable, scorer=scorer_name or DEFAULT_SCORER,
                                  max_iterations=run_iterations(iterations, settings),
                                  strategy=run_strategy(strategy))
        finally:
            if stop is not None:
                stop.set()  # the tab closed or the event was cancelled: the worker stops at its next step

    def halt(control_state: AskControl) -> None:
        control_state.stop.set()

    def preview(file: Any, picked_task: Any, visitor: Session) -> str:
        visitor.note_upload(file)
        return preview_attachment(runtime, file, picked_task, readable=visitor.readable)

    def lookup(question: str, picked_task: Any, profile: gr.OAuthProfile | None) -> Iterator[str]:
        may_spend = admit("rag_lookup", settings, profile).may_spend  # checked before any hint model request
        # The first lookup loads the embedding model (tens of seconds on a small CPU): say so while it does.
        yield from call_with_notes(lambda: rag_lookup(runtime, question, picked_task, may_spend=may_spend),
                                   _lookup_note)

    def load_tasks(source: str, split: str, level: Any, data_dir: str, visitor: Session,
                   profile: gr.OAuthProfile | None) -> tuple[gr.Dropdown, list[list[Any]], list[Any], str]:
        form = PickForm(source, split, level, data_dir)
        try:
            local = source_of(form.source) == "local"
            if local and (refused := local_folder_refusal(form.data_dir or "", settings, visitor)):
                return gr.Dropdown(choices=[], value=None), [], [], f"❌ {refused}"
            loaded = _picked_tasks(settings, form, local)
        except Exception as exc:  # noqa: BLE001 - FormError / DatasetError / bad folder / over budget: shown in place
            return gr.Dropdown(choices=[], value=None), [], [], f"❌ {shown(public_text(str(exc), settings))}"
        if not admit("load_tasks", settings, profile).show_answers:
            loaded = without_answers(loaded)  # GAIA's answers only for those who may run the model
        return (gr.Dropdown(choices=task_choices(loaded), value=None), sample_rows(loaded), loaded,
                loaded_message(loaded))

    _wire(settings, t, session, ask, halt, preview, lookup, load_tasks)
    return t


DEBUG_TAB = FunctionTab("🔎 Debug one question", "debug", build_debug_tab)
"""The "Debug one question" tab, as `app.py` lists it."""


def _wire(settings: Settings, t: DebugTab, session: gr.State, ask: Any, halt: Any, preview: Any, lookup: Any,
          load_tasks: Any) -> None:
    t.question.input(free_question, [t.upload], [t.task, t.task_info, t.attached], api_visibility="private",
                     queue=False)
    t.upload.change(attachment_line, [t.upload, t.task], t.attached, api_visibility="private", queue=False)
    # A new run clears the side output of the last one (preview or lookup of another question).
    t.ask_btn.click(lambda: "", None, t.side, api_visibility="private", queue=False)
    t.scorer.change(lambda name: name, t.scorer, t.scorer_pick, api_visibility="private", queue=False)
    t.max_iterations.change(lambda value: value, t.max_iterations, t.iterations_state, api_visibility="private",
                            queue=False)
    t.strategy.change(lambda value: value, t.strategy, t.strategy_state, api_visibility="private", queue=False)
    t.ask_btn.click(ask, [t.question, t.upload, t.task, t.use_rag, t.scorer_pick, t.control, session,
                          t.iterations_state, t.strategy_state],
                    [t.trace, t.answer, t.verdict, t.trace_file],
                    api_name="ask", concurrency_id="agent", concurrency_limit=settings.APP_CONCURRENCY)
    # Not `cancels=`: the handler ends itself, with a "stopped" note and the partial trace to download.
    t.stop_btn.click(halt, [t.control], None, api_visibility="private", queue=False)
    # show_progress on `side`: a spinner where the output will appear; the old output is replaced by it.
    t.preview_btn.click(preview, [t.upload, t.task, session], t.side, api_name="preview", concurrency_id="light",
                      show_progress="full")
    t.rag_btn.click(lookup, [t.question, t.task], t.side, api_name="rag_lookup", concurrency_id="light",
                  show_progress="full")
    t.load_btn.click(load_tasks, [t.pick_source, t.pick_split, t.pick_level, t.pick_dir, session],
                   [t.task_pick, t.task_table, t.samples, t.task_info], api_name="load_tasks", concurrency_id="light")
    t.task_pick.input(pick_task, [t.task_pick, t.samples], [t.question, t.task, t.task_info, t.upload, t.attached],
                    api_visibility="private")
