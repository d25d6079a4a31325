"""GAIA agent harness — the Gradio app: debug one question, evaluate a batch, chat.

Wiring only: handlers call `ui.*` functions, which call the one pipeline (`stream()`) and the
evaluation runner. The server answers HTTP at once; the agent (LLM client, graph, embeddings, tool
checks) loads in a background thread (`ui.runtime.Runtime`) and the header says what is ready.
Heavy libraries are imported there, never on this module's import path.

    python app.py            # serves on GRADIO_SERVER_NAME:GRADIO_SERVER_PORT (0.0.0.0:7860)
"""

import logging

import gradio as gr
from gradio.utils import get_space as on_space  # gradio's own test for real (not mocked) Space OAuth

from config import Settings, get_settings
from tools.hardening import make_non_dumpable
from ui.background import BatchControl
from ui.batch import (LEVELS, SOURCES, BatchView, FormError, compare, list_runs, load_samples, make_request,
                      run_stream)
from ui.chat import chat_stream
from ui.debug import ask_stream, preview_attachment, rag_lookup
from ui.runtime import Runtime
from ui.tables import RESULT_HEADERS, SAMPLE_HEADERS, sample_rows, task_choices

HEADER = ("# 🧭 GAIA agent harness\n"
          "A LangGraph ReAct agent over any OpenAI-compatible endpoint, with a live trace of every step.")
# Tool steps read better when the assistant's bubble spans the chat's width.
CSS = """#status-line {font-size: 0.92em}
#trace .bubble.bot-row, #chatbot .bubble.bot-row {width: calc(100% - var(--spacing-xl) * 6)}
#trace .bot-row .message, #chatbot .bot-row .message {width: 100%}"""


def build_app(settings: Settings, runtime: Runtime) -> gr.Blocks:
    """The three-tab app around one shared (lazily loaded) runtime."""
    agent_limit = settings.APP_CONCURRENCY

    # delete_cache: every hour, drop served files (traces, uploads, run downloads) older than two hours.
    with gr.Blocks(title="GAIA agent harness", fill_width=True, delete_cache=(3600, 7200)) as demo:
        gr.Markdown(HEADER)
        status = gr.Markdown(runtime.status_markdown(), elem_id="status-line")
        with gr.Accordion("Tools and tiers", open=False):
            tools_md = gr.Markdown(runtime.tools_markdown())
        timer = gr.Timer(1.0)

        # ---------------------------------------------------------------- debug one question
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
                            task_info = gr.Markdown("No GAIA task picked: a free question.", elem_id="task-info",
                                                    label="Task")
                    with gr.Row():
                        ask_btn = gr.Button("▶ Run", variant="primary", elem_id="ask-btn")
                        stop_btn = gr.Button("■ Stop", variant="stop")
                        preview_btn = gr.Button("👁 Preview attachment")
                        rag_btn = gr.Button("📚 RAG lookup only")
                with gr.Column(scale=2):
                    with gr.Accordion("Pick a task from a GAIA split", open=False):
                        pick_source = gr.Radio(SOURCES[:2], value=SOURCES[0], label="Source")
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

        # ---------------------------------------------------------------- batch evaluation
        with gr.Tab("📊 Batch evaluation", id="batch"):
            control = gr.State(BatchControl())  # per session (copies start fresh): stop flag, resumable run folder
            with gr.Row():
                with gr.Column():
                    source = gr.Radio(SOURCES, value=SOURCES[0], label="Source")
                    with gr.Row():
                        split = gr.Dropdown(["validation", "test"], value="validation", label="Split")
                        level = gr.Dropdown(LEVELS, value="All", label="Level")
                        max_samples = gr.Number(value=0, precision=0, minimum=0, label="Max samples (0 = all)",
                                                elem_id="max-samples")
                    data_dir = gr.Textbox(label="Local GAIA folder", placeholder="/path/to/GAIA", elem_id="data-dir")
                    task_ids = gr.Textbox(label="Task ids (optional, comma or space separated)")
                with gr.Column():
                    with gr.Row():
                        concurrency = gr.Slider(1, 16, value=min(settings.BATCH_CONCURRENCY, 16), step=1,
                                                label="Concurrency", elem_id="concurrency")
                        delay = gr.Number(value=settings.BATCH_QUESTION_DELAY, minimum=0,
                                          label="Delay between task starts (s)", elem_id="delay")
                    batch_rag = gr.Checkbox(value=settings.RAG_ENABLED, label="Use the RAG knowledge base")
                    if on_space():
                        gr.LoginButton()
                    username = gr.Textbox(label="Hugging Face username (scoring API; not needed when signed in)"
                                          if on_space() else "Hugging Face username (scoring API)")
                    with gr.Row():
                        run_btn = gr.Button("▶ Run", variant="primary", elem_id="run-btn")
                        halt_btn = gr.Button("■ Stop", variant="stop", elem_id="halt-btn")
                        resume_btn = gr.Button("↻ Resume", elem_id="resume-btn")
            # Not an output of the run: gradio hides the progress bar of outputs once values stream in.
            progress_box = gr.Markdown("**Progress**", elem_id="batch-progress", min_height=90, container=True)
            batch_status = gr.Markdown("Choose the tasks and press Run.", elem_id="batch-status", label="Status")
            table = gr.Dataframe(headers=RESULT_HEADERS, interactive=False, label="Results", elem_id="results",
                                 max_height=420)
            with gr.Row():
                chart = gr.Image(label="Accuracy", type="filepath", height=300, interactive=False)
                downloads = gr.File(label="Downloads", file_count="multiple", interactive=False)
            with gr.Accordion("Report (report.md)", open=False):
                summary = gr.Markdown("The run's report appears here when it ends.", elem_id="report", label="Report")
            with gr.Accordion("Compare two runs", open=False):
                with gr.Row():
                    run_a = gr.Dropdown(choices=[], label="Run A (before)", allow_custom_value=True)
                    run_b = gr.Dropdown(choices=[], label="Run B (after)", allow_custom_value=True)
                with gr.Row():
                    refresh_btn = gr.Button("Refresh run list")
                    compare_btn = gr.Button("Compare")
                comparison = gr.Markdown(label="Comparison")

        # ---------------------------------------------------------------- chat
        with gr.Tab("💬 Chat", id="chat"):
            def chat(message, history):
                yield from chat_stream(runtime, message, history)

            gr.ChatInterface(
                fn=chat,
                multimodal=True,
                chatbot=gr.Chatbot(height=560, elem_id="chatbot", placeholder="Ask anything; attach a file with 📎."),
                textbox=gr.MultimodalTextbox(placeholder="Message (attach a file with 📎)…", file_count="single",
                                             elem_id="chat-input"),
                api_name="chat", concurrency_limit=agent_limit, fill_height=False,
            )

        # ---------------------------------------------------------------- handlers
        def refresh_status():
            done = runtime.ready.is_set()
            return runtime.status_markdown(), runtime.tools_markdown(), gr.Timer(active=not done)

        def ask(question, file, picked_task, use_rag):
            yield from ask_stream(runtime, question, file, picked_task, use_rag)

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
                return gr.Textbox(), None, "No GAIA task picked: a free question."
            expected = chosen.final_answer if chosen.has_answer else "? (test split)"
            attach = f" · attachment: `{chosen.file_name}`" if chosen.file_name else ""
            info = f"**Task** `{chosen.task_id}` · level {chosen.level}{attach} · expected: **{expected}**"
            return chosen.question, chosen, info

        def batch_views(form, control_state, profile, progress, resume):
            *fields, username = form
            name = profile.username if profile is not None else username
            try:
                req = make_request(*fields, name)
            except FormError as exc:
                yield BatchView(status=f"❌ {exc}").as_tuple()
                return
            for view in run_stream(runtime, req, control_state, resume=resume, progress=progress):
                yield view.as_tuple()

        # Two handlers (not one with a flag) so each is its own API endpoint with the form as its inputs.
        def evaluate(source, split, data_dir, level, max_samples, task_ids, concurrency, question_delay, use_rag,
                     username, control_state, profile: gr.OAuthProfile | None, progress=gr.Progress()):
            form = (source, split, data_dir, level, max_samples, task_ids, concurrency, question_delay, use_rag, username)
            yield from batch_views(form, control_state, profile, progress, resume=False)

        def resume(source, split, data_dir, level, max_samples, task_ids, concurrency, question_delay, use_rag,
                   username, control_state, profile: gr.OAuthProfile | None, progress=gr.Progress()):
            form = (source, split, data_dir, level, max_samples, task_ids, concurrency, question_delay, use_rag, username)
            yield from batch_views(form, control_state, profile, progress, resume=True)

        def halt(control_state):
            if not control_state.running:
                return "No run is going in this session."
            control_state.stop.set()
            return "⏹️ Stopping: no new task starts; running tasks finish and are checkpointed. Resume continues."

        def preview(file, picked_task):
            return preview_attachment(runtime, file, picked_task)

        def lookup(question, picked_task):
            return rag_lookup(runtime, question, picked_task)

        def status_text() -> str:
            """The header's status line: what the preload made ready, is loading, or is missing."""
            return runtime.status_markdown()

        def runs():
            found = list_runs(settings)
            return gr.Dropdown(choices=found), gr.Dropdown(choices=found)

        # ---------------------------------------------------------------- wiring
        demo.load(refresh_status, None, [status, tools_md, timer], api_visibility="private", queue=False)
        timer.tick(refresh_status, None, [status, tools_md, timer], api_visibility="private", queue=False)

        gr.api(status_text, api_name="status", queue=False)

        question.input(lambda: (None, "No GAIA task picked: a free question."), None, [task, task_info],
                       api_visibility="private", queue=False)
        ask_event = ask_btn.click(ask, [question, upload, task, use_rag], [trace, answer, verdict, trace_file],
                                  api_name="ask", concurrency_id="agent", concurrency_limit=agent_limit)
        stop_btn.click(None, None, None, cancels=[ask_event], api_visibility="private", queue=False)
        preview_btn.click(preview, [upload, task], side, api_name="preview", concurrency_id="light")
        rag_btn.click(lookup, [question, task], side, api_name="rag_lookup", concurrency_id="light")
        load_btn.click(load_tasks, [pick_source, pick_split, pick_level, pick_dir],
                       [task_pick, task_table, samples, task_info], api_name="load_tasks", concurrency_id="light")
        task_pick.input(pick_task, [task_pick, samples], [question, task, task_info], api_visibility="private")

        form = [source, split, data_dir, level, max_samples, task_ids, concurrency, delay, batch_rag, username, control]
        outputs = [batch_status, table, summary, chart, downloads]
        run_btn.click(evaluate, form, outputs, api_name="evaluate", concurrency_id="batch", concurrency_limit=2,
                      show_progress_on=[progress_box])
        resume_btn.click(resume, form, outputs, api_name="resume", concurrency_id="batch", concurrency_limit=2,
                         show_progress_on=[progress_box])
        halt_btn.click(halt, [control], batch_status, api_name="stop", queue=False)
        refresh_btn.click(runs, None, [run_a, run_b], api_visibility="private", queue=False)
        demo.load(runs, None, [run_a, run_b], api_visibility="private", queue=False)
        compare_btn.click(compare, [run_a, run_b], comparison, api_name="compare", concurrency_id="light")
    return demo


def main() -> None:
    """Serve, then load the agent in a background thread (HTTP answers while it loads)."""
    make_non_dumpable()  # no same-uid process (a sandboxed child) reads /proc/<pid>/environ or ptraces the app
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per model request drowns the log
    settings = get_settings()
    runtime = Runtime(settings)
    demo = build_app(settings, runtime)
    demo.queue(default_concurrency_limit=settings.APP_CONCURRENCY)
    demo.launch(server_name=settings.GRADIO_SERVER_NAME, server_port=settings.GRADIO_SERVER_PORT,
                allowed_paths=[str(settings.OUTPUT_DIR), str(settings.GAIA_CACHE_DIR)], show_error=True,
                ssr_mode=False, css=CSS, footer_links=["api"], prevent_thread_lock=True)
    # Started once the server is up, so its imports (langchain, torch) do not delay the first page.
    if settings.APP_PRELOAD:
        runtime.start()
    demo.block_thread()


if __name__ == "__main__":
    main()
