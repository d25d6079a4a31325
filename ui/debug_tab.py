"""The "Debug one question" tab: a question (free or a picked GAIA task), its live trace, answer and verdict."""

from __future__ import annotations

import gradio as gr

from config import Settings
from ui.batch import LEVELS, SOURCES, load_samples, make_request
from ui.debug import ask_stream, preview_attachment, rag_lookup
from ui.runtime import Runtime
from ui.tables import SAMPLE_HEADERS, sample_rows, task_choices

FREE_QUESTION = "No GAIA task picked: a free question."


def build_debug_tab(demo: gr.Blocks, settings: Settings, runtime: Runtime) -> None:
    """The tab's components and their events (inside the caller's `gr.Blocks`)."""
    with gr.Tab("🔎 Debug one question", id="debug"):
        task = gr.State(None)          # the picked GAIA task (a Sample) of this session
        samples = gr.State([])         # the loaded split of this session
        with gr.Row():
            with gr.Column(scale=3):
                question = gr.Textbox(label="Question", lines=3, placeholder="Ask a GAIA-style question…",
                                      elem_id="question")
                with gr.Row():
                    upload = gr.File(label="Attachment (optional)", type="filepath", height=110)
                    with gr.Column():
                        use_rag = gr.Checkbox(value=settings.RAG_ENABLED, label="Use the RAG knowledge base")
                        task_info = gr.Markdown(FREE_QUESTION, elem_id="task-info", label="Task")
                with gr.Row():
                    ask_btn = gr.Button("▶ Run", variant="primary", elem_id="ask-btn")
                    stop_btn = gr.Button("■ Stop", variant="stop")
                    preview_btn = gr.Button("👁 Preview attachment")
                    rag_btn = gr.Button("📚 RAG lookup only")
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
            trace_file = gr.DownloadButton("⬇ Download trace (JSONL)", value=None, scale=1)
        side = gr.Markdown(elem_id="side-output", label="Preview / lookup")

    def ask(question, file, picked_task, use_rag):
        yield from ask_stream(runtime, question, file, picked_task, use_rag)

    def preview(file, picked_task):
        return preview_attachment(runtime, file, picked_task)

    def lookup(question, picked_task):
        return rag_lookup(runtime, question, picked_task)

    def load_tasks(source, split, level, data_dir):
        try:
            loaded = load_samples(make_request(source, split, data_dir, level, 0, "", 1, 0, True, ""), settings)
        except Exception as exc:  # noqa: BLE001 - DatasetError / bad folder: shown in place
            return gr.Dropdown(choices=[], value=None), [], [], f"❌ {exc}"
        return (gr.Dropdown(choices=task_choices(loaded), value=None), sample_rows(loaded), loaded,
                f"Loaded {len(loaded)} task(s). Pick one above.")

    def pick_task(task_id, loaded):
        chosen = next((s for s in loaded or [] if s.task_id == task_id), None)
        if chosen is None:
            return gr.Textbox(), None, FREE_QUESTION
        expected = chosen.final_answer if chosen.has_answer else "? (test split)"
        attach = f" · attachment: `{chosen.file_name}`" if chosen.file_name else ""
        info = f"**Task** `{chosen.task_id}` · level {chosen.level}{attach} · expected: **{expected}**"
        return chosen.question, chosen, info

    question.input(lambda: (None, FREE_QUESTION), None, [task, task_info], api_visibility="private", queue=False)
    ask_event = ask_btn.click(ask, [question, upload, task, use_rag], [trace, answer, verdict, trace_file],
                              api_name="ask", concurrency_id="agent", concurrency_limit=settings.APP_CONCURRENCY)
    stop_btn.click(None, None, None, cancels=[ask_event], api_visibility="private", queue=False)
    preview_btn.click(preview, [upload, task], side, api_name="preview", concurrency_id="light")
    rag_btn.click(lookup, [question, task], side, api_name="rag_lookup", concurrency_id="light")
    load_btn.click(load_tasks, [pick_source, pick_split, pick_level, pick_dir],
                   [task_pick, task_table, samples, task_info], api_name="load_tasks", concurrency_id="light")
    task_pick.input(pick_task, [task_pick, samples], [question, task, task_info], api_visibility="private")
