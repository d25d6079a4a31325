"""The "Batch evaluation" tab: the run form, live progress and results, the report, and run comparison."""

from __future__ import annotations

import gradio as gr
from gradio.utils import get_space as on_space  # gradio's own test for real (not mocked) Space OAuth

from config import Settings
from evaluation.scorer import DEFAULT_SCORER
from ui.access import refusal_for, username_of
from ui.background import BatchControl
from ui.batch import LEVELS, SCORER_CHOICES, SOURCES, BatchView, FormError, make_request, run_stream
from ui.batch_guard import ListenerWatch, gradio_unread
from ui.budget_fields import iteration_ceiling, run_iterations
from ui.runs import compare, list_runs, resolve_run, resumable_choices
from ui.runtime import Runtime
from ui.session import Session, public_text
from ui.tables import RESULT_HEADERS

DELAY_LABEL = "Delay between task starts (s, only at concurrency 1)"


def build_batch_tab(demo: gr.Blocks, settings: Settings, runtime: Runtime, session: gr.State) -> None:
    """The tab's components and their events (inside `demo`, which also lists the runs on page load)."""
    with gr.Tab("📊 Batch evaluation", id="batch"):
        control = gr.State(BatchControl())  # per session (copies start fresh): stop flag, resumable run folder
        with gr.Row():
            with gr.Column():
                source = gr.Radio(list(SOURCES), value=SOURCES[0], label="Source")
                with gr.Row():
                    split = gr.Dropdown(["validation", "test"], value="validation", label="Split")
                    level = gr.Dropdown(LEVELS, value="All", label="Level")
                    # No `minimum`: gradio would refuse -1 with a bare toast; make_request says what is wrong.
                    max_samples = gr.Number(value=0, precision=0, label="Max samples (0 = all)",
                                            elem_id="max-samples")
                data_dir = gr.Textbox(label="Local GAIA folder", placeholder="/path/to/GAIA", elem_id="data-dir")
                task_ids = gr.Textbox(label="Task ids (optional, comma or space separated)")
            with gr.Column():
                with gr.Row():
                    concurrency = gr.Slider(1, 16, value=min(settings.BATCH_CONCURRENCY, 16), step=1,
                                            label="Concurrency", elem_id="concurrency")
                    delay = gr.Number(value=settings.BATCH_QUESTION_DELAY, label=DELAY_LABEL, elem_id="delay",
                                      info="Applies only at concurrency 1; at higher concurrency the rate "
                                           "limiter paces the requests.")
                with gr.Row():
                    batch_rag = gr.Checkbox(value=settings.RAG_ENABLED, label="Use the RAG knowledge base")
                    iterations = gr.Number(value=settings.MAX_ITERATIONS, precision=0, minimum=1,
                                           maximum=iteration_ceiling(settings), elem_id="batch-max-iterations",
                                           label="Max iterations per task (kept in the run's run.json)")
                    # A State mirror: the /evaluate and /resume API signatures stay as they were.
                    iterations_state = gr.State(None)
                scorer = gr.Dropdown(SCORER_CHOICES, value=DEFAULT_SCORER, label="Scorer", elem_id="batch-scorer",
                                     info="How answers are scored; a resumed run keeps the scorer it started with.")
                # The session's pick, as State: the `evaluate` / `resume` API keeps its form (API clients: official).
                scorer_pick = gr.State(DEFAULT_SCORER)
                if on_space():
                    gr.LoginButton()
                # On a Space the scoring API gets the signed-in username, never a typed one.
                username = gr.Textbox(label="Hugging Face username (scoring API)", visible=not settings.SPACE_ID)
                gr.Markdown(f"At most {settings.BATCH_MAX_TASKS:,} tasks per run; one run per session, "
                            f"{settings.BATCH_MAX_RUNNING} on the app at once.", elem_id="batch-limits")
                with gr.Row():
                    run_btn = gr.Button("▶ Run", variant="primary", elem_id="run-btn")
                    halt_btn = gr.Button("■ Stop", variant="stop", elem_id="halt-btn")
                with gr.Row(equal_height=True):
                    resume_pick = gr.Dropdown(choices=[], value=None, label="Resumable runs (from the runs folder)",
                                              elem_id="resume-pick", scale=3,
                                              info="Unfinished runs; Resume continues the picked one with its own "
                                                   "tasks and data source (else this session's last run).")
                    resume_btn = gr.Button("↻ Resume", elem_id="resume-btn", scale=1)
        # Not an output of the run: gradio hides the progress bar of outputs once values stream in.
        progress_box = gr.Markdown("**Progress**", elem_id="batch-progress", min_height=90, container=True)
        batch_status = gr.Markdown("Choose the tasks and press Run.", elem_id="batch-status", label="Status")
        table = gr.Dataframe(headers=RESULT_HEADERS, interactive=False, label="Results", elem_id="results",
                             max_height=420)
        with gr.Row():
            # min_width: on a phone the chart and the downloads stack instead of sharing 420 px.
            chart = gr.Image(label="Accuracy", type="filepath", height=300, interactive=False, min_width=300)
            downloads = gr.File(label="Downloads", file_count="multiple", interactive=False, elem_id="downloads",
                                min_width=300)
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

    def batch_views(form, control_state, visitor, profile, request, progress, resume, resume_dir=None):
        *fields, username, scorer_name, iterations = form
        if (refused := refusal_for(settings, profile)) is not None:  # before any model request
            yield BatchView(status=refused).as_tuple()
            return
        name = username_of(profile) or ("" if settings.SPACE_ID else username)  # on a Space: the login only
        try:
            req = make_request(*fields, name, scorer_name, max_iterations=run_iterations(iterations, settings))
        except FormError as exc:  # before anything runs; the previous run's results are cleared with it
            yield BatchView(status=f"❌ {exc}").as_tuple()
            return
        if resume_dir:
            found = resolve_run(resume_dir, settings, visitor)  # never another session's run, never a typed path
            if found is None:
                yield BatchView(status="❌ Nothing to resume under that name: pick a run from the list.").as_tuple()
                return
            resume_dir = str(found)
        watch = ListenerWatch(gradio_unread(demo, getattr(request, "session_hash", None)),
                              settings.BATCH_UNWATCHED_STOP_S)
        try:
            for view in run_stream(runtime, req, control_state, resume=resume, progress=progress,
                                   resume_dir=resume_dir, session=visitor, watch=watch):
                yield view.as_tuple()
        except Exception as exc:  # noqa: BLE001 - a failure outside the run's own handling: one clear line
            yield BatchView(status=f"❌ {public_text(str(exc), settings)}").as_tuple()

    # Two handlers (not one with a flag) so each is its own API endpoint with the form as its inputs.
    def evaluate(source, split, data_dir, level, max_samples, task_ids, concurrency, question_delay, use_rag,
                 username, scorer_name, control_state, visitor: Session, iterations=None,
                 profile: gr.OAuthProfile | None = None,
                 request: gr.Request = None, progress=gr.Progress()):  # type: ignore[assignment]  # noqa: B008
        form = (source, split, data_dir, level, max_samples, task_ids, concurrency, question_delay, use_rag, username,
                scorer_name, iterations)
        yield from batch_views(form, control_state, visitor, profile, request, progress, resume=False)

    def resume(source, split, data_dir, level, max_samples, task_ids, concurrency, question_delay, use_rag,
               username, scorer_name, control_state, visitor: Session, run_dir=None, iterations=None,
               profile: gr.OAuthProfile | None = None, request: gr.Request = None,  # type: ignore[assignment]
               progress=gr.Progress()):  # noqa: B008 - gradio injects both
        form = (source, split, data_dir, level, max_samples, task_ids, concurrency, question_delay, use_rag, username,
                scorer_name, iterations)
        yield from batch_views(form, control_state, visitor, profile, request, progress, resume=True,
                               resume_dir=run_dir or None)

    def halt(control_state):
        if not control_state.running:
            return "No run is going in this session."
        control_state.stop.set()
        return "⏹️ Stopping: no new task starts; running tasks finish and are checkpointed. Resume continues."

    def runs(control_state, visitor: Session):
        found = list_runs(settings, visitor)
        resumable = resumable_choices(settings, control_state.output_dir if control_state else None, visitor)
        return gr.Dropdown(choices=found), gr.Dropdown(choices=found), gr.Dropdown(choices=resumable, value=None)

    def compare_visible(run_a, run_b, visitor: Session):
        return compare(run_a, run_b, settings, visitor)

    form = [source, split, data_dir, level, max_samples, task_ids, concurrency, delay, batch_rag, username, scorer_pick,
            control, session]
    outputs = [batch_status, table, summary, chart, downloads]
    run_lists = [run_a, run_b, resume_pick]
    # One more than the slots, so an extra run reaches the handler and hears "busy" instead of queueing.
    batch_limit = settings.BATCH_MAX_RUNNING + 1
    iterations.change(lambda value: value, iterations, iterations_state, api_visibility="private", queue=False)
    run_btn.click(evaluate, [*form, iterations_state], outputs, api_name="evaluate", concurrency_id="batch",
                  concurrency_limit=batch_limit, show_progress_on=[progress_box]
                  ).then(runs, [control, session], run_lists, api_visibility="private")
    resume_btn.click(resume, [*form, resume_pick, iterations_state], outputs, api_name="resume", concurrency_id="batch",
                     concurrency_limit=batch_limit, show_progress_on=[progress_box]
                     ).then(runs, [control, session], run_lists, api_visibility="private")
    halt_btn.click(halt, [control], batch_status, api_name="stop", queue=False)
    scorer.change(lambda name: name, scorer, scorer_pick, api_visibility="private", queue=False)
    refresh_btn.click(runs, [control, session], run_lists, api_visibility="private", queue=False)
    demo.load(runs, [control, session], run_lists, api_visibility="private", queue=False)
    compare_btn.click(compare_visible, [run_a, run_b, session], comparison, api_name="compare", concurrency_id="light")
