"""The "Debug one question" tab: a question (free or a picked GAIA task), its live trace, answer and verdict."""

from __future__ import annotations

import gradio as gr

from config import Settings
from evaluation.scorer import DEFAULT_SCORER
from ui.access import refusal_for
from ui.background import AskControl
from ui.batch import LEVELS, SCORER_CHOICES, SOURCES, load_samples, make_request
from ui.budget_fields import iteration_ceiling, run_iterations
from ui.debug import ask_stream, attachment_line, loaded_message, preview_attachment, rag_lookup
from ui.runtime import Runtime
from ui.session import Session, local_folder_refusal, public_text
from ui.tables import SAMPLE_HEADERS, sample_rows, task_choices
from ui.text import shown
from ui.visitor import load_local_tasks, without_answers

FREE_QUESTION = "No GAIA task picked: a free question."


def build_debug_tab(demo: gr.Blocks, settings: Settings, runtime: Runtime, session: gr.State) -> None:
    """The tab's components and their events (inside the caller's `gr.Blocks`)."""
    with gr.Tab("🔎 Debug one question", id="debug"):
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
                        scorer_pick = gr.State(DEFAULT_SCORER)  # as State: the `ask` API keeps its inputs
                        max_iterations = gr.Number(value=settings.MAX_ITERATIONS, precision=0, minimum=1,
                                                   maximum=iteration_ceiling(settings), elem_id="max-iterations",
                                                   label="Max iterations (this question)")
                        iterations_state = gr.State(None)  # its mirror: the /ask API signature stays as it was
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
                pick_source = gr.Radio(list(SOURCES[:2]), value=SOURCES[0], label="Source")
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

    def ask(question, file, picked_task, use_rag, scorer_name, control_state, visitor: Session, iterations=None,
            profile: gr.OAuthProfile | None = None):
        if (refused := refusal_for(settings, profile)) is not None:  # before any model request
            yield [gr.ChatMessage(role="assistant", content=refused)], "", refused, None
            return
        visitor.note_upload(file)
        stop = control_state.begin() if control_state is not None else None
        try:
            yield from ask_stream(runtime, question, file, picked_task, use_rag, stop=stop, readable=visitor.readable,
                                  scorer=scorer_name or DEFAULT_SCORER,
                                  max_iterations=run_iterations(iterations, settings))
        finally:
            if stop is not None:
                stop.set()  # the tab closed or the event was cancelled: the worker stops at its next step

    def halt(control_state):
        control_state.stop.set()

    def preview(file, picked_task, visitor: Session):
        visitor.note_upload(file)
        return preview_attachment(runtime, file, picked_task, readable=visitor.readable)

    def lookup(question, picked_task, profile: gr.OAuthProfile | None):
        return rag_lookup(runtime, question, picked_task, may_spend=refusal_for(settings, profile) is None)

    def load_tasks(source, split, level, data_dir, visitor: Session, profile: gr.OAuthProfile | None):
        if source == SOURCES[0] and (refused := local_folder_refusal(data_dir or "", settings, visitor)):
            return gr.Dropdown(choices=[], value=None), [], [], f"❌ {refused}"
        try:  # a local folder (maybe a visitor's upload) loads in the budgeted worker; the hub is GAIA's own
            loaded = load_local_tasks(settings, source, split, level, data_dir) if source == SOURCES[0] else \
                load_samples(make_request(source, split, data_dir, level, 0, "", 1, 0, True, ""), settings)
        except Exception as exc:  # noqa: BLE001 - DatasetError / bad folder / over budget: shown in place
            return gr.Dropdown(choices=[], value=None), [], [], f"❌ {shown(public_text(str(exc), settings))}"
        if refusal_for(settings, profile) is not None:
            loaded = without_answers(loaded)  # GAIA's answers only for those who may run the model
        return (gr.Dropdown(choices=task_choices(loaded), value=None), sample_rows(loaded), loaded,
                loaded_message(loaded))

    def pick_task(task_id, loaded):
        chosen = next((s for s in loaded or [] if s.task_id == task_id), None)
        if chosen is None:
            return gr.Textbox(), None, FREE_QUESTION, None, attachment_line(None, None)
        expected = chosen.final_answer if chosen.has_answer else "? (test split)"
        attach = f" · attachment: `{chosen.file_name}`" if chosen.file_name else ""
        info = f"**Task** `{chosen.task_id}` · level {chosen.level}{attach} · expected: **{expected}**"
        # The upload is cleared: the task's own file goes with it (attachment_for), and the line says which.
        return chosen.question, chosen, info, None, attachment_line(None, chosen)

    def free_question(file):
        return None, FREE_QUESTION, attachment_line(file, None)

    question.input(free_question, [upload], [task, task_info, attached], api_visibility="private", queue=False)
    upload.change(attachment_line, [upload, task], attached, api_visibility="private", queue=False)
    # A new run clears the side output of the last one (preview or lookup of another question).
    ask_btn.click(lambda: "", None, side, api_visibility="private", queue=False)
    scorer.change(lambda name: name, scorer, scorer_pick, api_visibility="private", queue=False)
    max_iterations.change(lambda value: value, max_iterations, iterations_state, api_visibility="private",
                          queue=False)
    ask_btn.click(ask, [question, upload, task, use_rag, scorer_pick, control, session, iterations_state],
                  [trace, answer, verdict, trace_file],
                  api_name="ask", concurrency_id="agent", concurrency_limit=settings.APP_CONCURRENCY)
    # Not `cancels=`: the handler ends itself, with a "stopped" note and the partial trace to download.
    stop_btn.click(halt, [control], None, api_visibility="private", queue=False)
    # show_progress on `side`: a spinner where the output will appear; the old output is replaced by it.
    preview_btn.click(preview, [upload, task, session], side, api_name="preview", concurrency_id="light",
                      show_progress="full")
    rag_btn.click(lookup, [question, task], side, api_name="rag_lookup", concurrency_id="light",
                  show_progress="full")
    load_btn.click(load_tasks, [pick_source, pick_split, pick_level, pick_dir, session],
                   [task_pick, task_table, samples, task_info], api_name="load_tasks", concurrency_id="light")
    task_pick.input(pick_task, [task_pick, samples], [question, task, task_info, upload, attached],
                    api_visibility="private")
