"""The "Batch evaluation" tab: the run form, live progress and results, the report, and run comparison."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import gradio as gr

from config import Settings
from evaluation.scorer import DEFAULT_SCORER
from ui.background import BatchControl
from ui.batch import SCORER_CHOICES, BatchView, run_stream
from ui.forms import LEVELS, MAX_CONCURRENCY, SOURCE_LABELS, BatchForm, FormError, source_of
from ui.run_fields import attempts_ceiling, iterations_field, run_attempts, run_iterations
from ui.runs import compare, list_runs, resolve_run, resumable_choices
from ui.runtime import Runtime
from ui.session import Session, public_text
from ui.strategy_field import run_strategy, strategy_field
from ui.tab import FunctionTab
from ui.tables import RESULT_HEADERS, parse_task_ids
from visitors.access import username_of
from visitors.batch_guard import ListenerWatch, gradio_unread
from visitors.endpoints import admit

DELAY_LABEL = "Delay between task starts (s, only at concurrency 1)"


@dataclass
class BatchTab:
    """The tab's components that events read or write."""

    form: list[gr.components.Component]
    control: gr.State
    outputs: list[gr.components.Component]
    progress_box: gr.Markdown
    run_btn: gr.Button
    halt_btn: gr.Button
    resume_pick: gr.Dropdown
    resume_btn: gr.Button
    run_a: gr.Dropdown
    run_b: gr.Dropdown
    refresh_btn: gr.Button
    compare_btn: gr.Button
    comparison: gr.Markdown
    scorer_pick: gr.State
    """The session's scorer pick, as State: the `evaluate` / `resume` API keeps its form (API clients: official)."""
    iterations_state: gr.State
    """The session's iteration cap, as State for the same reason."""
    choosers: tuple[gr.Dropdown, gr.Number]
    """The scorer and iteration components whose changes the States mirror."""
    rerun_btn: gr.Button
    """Re-runs Run A's failures into a new run folder, its tool calls replayed (issue 35)."""
    strategy: gr.Dropdown | None = None
    strategy_state: gr.State | None = None
    """The session's strategy pick (issue 32), as State for the same reason."""
    attempts: gr.Number | None = None
    """Attempts per task (issue 32, `--attempts K`): pass@1, pass@K and the majority in the summary."""
    attempts_state: gr.State | None = None
    """The session's attempts pick, as State for the same reason."""


def _run_choices(settings: Settings) -> tuple[gr.Dropdown, gr.Number]:
    """The scorer and the iteration cap of a run (a resumed run keeps the scorer it started with)."""
    iterations = iterations_field(settings, elem_id="batch-max-iterations",
                                  label="Max iterations per task (kept in the run's run.json)")
    scorer = gr.Dropdown(SCORER_CHOICES, value=DEFAULT_SCORER, label="Scorer", elem_id="batch-scorer",
                         info="How answers are scored; a resumed run keeps the scorer it started with.")
    return scorer, iterations


def _form_components(settings: Settings) -> tuple[list[Any], list[Any]]:
    """The form's inputs (in BatchForm's order) and the ones that show only for some sources."""
    source = gr.Radio(list(SOURCE_LABELS.values()), value=SOURCE_LABELS["local"], label="Source", elem_id="source")
    with gr.Row():
        split = gr.Dropdown(["validation", "test"], value="validation", label="Split", elem_id="split")
        level = gr.Dropdown(LEVELS, value="All", label="Level", elem_id="level")
        # No `minimum` and no `precision`: gradio would refuse -1 with a bare toast or round 2.5 silently;
        # the form says what is wrong instead.
        max_samples = gr.Number(value=0, label="Max samples (0 = all)", elem_id="max-samples")
    data_dir = gr.Textbox(label="Local GAIA folder", placeholder="/path/to/GAIA", elem_id="data-dir")
    task_ids = gr.Textbox(label="Task ids (optional, comma or space separated)", elem_id="task-ids")
    with gr.Row():
        concurrency = gr.Number(value=min(settings.BATCH_CONCURRENCY, MAX_CONCURRENCY), elem_id="concurrency",
                                label=f"Concurrency (1–{MAX_CONCURRENCY})")
        delay = gr.Number(value=settings.BATCH_QUESTION_DELAY, label=DELAY_LABEL, elem_id="delay",
                          info="Applies only at concurrency 1; at higher concurrency the rate limiter paces "
                               "the requests.")
    batch_rag = gr.Checkbox(value=settings.RAG_ENABLED, label="Use the RAG knowledge base")
    # On a Space the scoring API gets the signed-in username (the Sign-in button is above the tabs).
    username = gr.Textbox(label="Hugging Face username (scoring API)", visible=False, elem_id="username")
    form = [source, split, data_dir, level, max_samples, task_ids, concurrency, delay, batch_rag, username]
    return form, [data_dir, split, level, max_samples, task_ids, username]


def _adapt(settings: Settings, label: str) -> tuple[Any, ...]:
    """The form for a source: the folder only for a local one, split/level/ids not for the scoring API."""
    source = source_of(label)
    tasks = source != "api"
    return (gr.Textbox(visible=source == "local"), gr.Dropdown(visible=tasks), gr.Dropdown(visible=tasks),
            gr.Number(visible=tasks), gr.Textbox(visible=tasks),
            gr.Textbox(visible=source == "api" and not settings.SPACE_ID))


def _layout(settings: Settings) -> BatchTab:
    control = gr.State(BatchControl())  # per session (copies start fresh): stop flag, resumable run folder
    with gr.Row():
        with gr.Column():
            form, adaptive = _form_components(settings)
            choosers = _run_choices(settings)
            strategy = strategy_field(settings, elem_id="batch-strategy",
                                      label="Strategy (kept in the run's run.json; a resume keeps the run's own)")
            attempts = gr.Number(value=settings.ATTEMPTS, precision=0, minimum=1, maximum=attempts_ceiling(settings),
                                 elem_id="batch-attempts", label="Attempts per task (voted)",
                                 info="Above 1: each task is solved K times, the majority answer kept; the summary "
                                      "gives pass@1, pass@K and the majority's accuracy. Each attempt costs a solve.")
        with gr.Column():
            gr.Markdown(f"At most {settings.BATCH_MAX_TASKS:,} tasks per run; one run per session, "
                        f"{settings.BATCH_MAX_RUNNING} on the app at once.", elem_id="batch-limits")
            with gr.Row():
                run_btn = gr.Button("▶ Run", variant="primary", elem_id="run-btn")
                halt_btn = gr.Button("■ Stop", variant="stop", elem_id="halt-btn")
            # Right under the buttons: a refusal or error shows where the visitor looks, not at the page's end.
            batch_status = gr.Markdown("Choose the tasks and press Run.", elem_id="batch-status", label="Status")
            # Not an output of the run: gradio hides the progress bar of outputs once values stream in.
            progress_box = gr.Markdown("**Progress**", elem_id="batch-progress", min_height=60, container=True)
            with gr.Row(equal_height=True):
                resume_pick = gr.Dropdown(choices=[], value=None, label="Resumable runs (from the runs folder)",
                                          elem_id="resume-pick", scale=3,
                                          info="Unfinished runs; Resume continues the picked one with its own "
                                               "tasks and data source (else this session's last run).")
                resume_btn = gr.Button("↻ Resume", elem_id="resume-btn", scale=1)
    form[0].change(lambda label: _adapt(settings, label), [form[0]], adaptive, api_visibility="private", queue=False)
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
            run_a = gr.Dropdown(choices=[], label="Run A (before)", allow_custom_value=True, elem_id="run-a")
            run_b = gr.Dropdown(choices=[], label="Run B (after)", allow_custom_value=True, elem_id="run-b")
        with gr.Row():
            refresh_btn = gr.Button("Refresh run list")
            compare_btn = gr.Button("Compare", elem_id="compare-btn")
            rerun_btn = gr.Button("↺ Re-run Run A's failures (tools replayed)", elem_id="rerun-btn")
        comparison = gr.Markdown(label="Comparison", elem_id="comparison")
    return BatchTab(form, control, [batch_status, table, summary, chart, downloads], progress_box, run_btn, halt_btn,
                    resume_pick, resume_btn, run_a, run_b, refresh_btn, compare_btn, comparison,
                    gr.State(DEFAULT_SCORER), gr.State(None), choosers, rerun_btn, strategy,
                    gr.State(settings.AGENT_STRATEGY), attempts, gr.State(settings.ATTEMPTS))


class BatchHandlers:
    """The tab's handlers around one settings/runtime/demo (public names are the API's endpoints)."""

    def __init__(self, demo: gr.Blocks, settings: Settings, runtime: Runtime) -> None:
        self.demo, self.settings, self.runtime = demo, settings, runtime

    def views(self, form: BatchForm, control: BatchControl, visitor: Session, profile: Any, request: Any,
              progress: Any, resume: bool, resume_dir: str | None = None,
              rerun_of: str | None = None) -> Iterator[tuple[Any, ...]]:
        """The run's views as the tab's output values: refusals and form errors first, before anything runs."""
        settings = self.settings
        endpoint = "rerun_failed" if rerun_of is not None else "resume" if resume else "evaluate"
        if (refused := admit(endpoint, settings, profile).refusal) is not None:  # before any model request
            yield BatchView(status=refused).as_tuple()
            return
        form.username = username_of(profile) or ("" if settings.SPACE_ID else form.username)  # a Space: the login
        try:
            req = form.request(parse_task_ids)
        except FormError as exc:  # before anything runs; the previous run's results are cleared with it
            yield BatchView(status=f"❌ {exc}").as_tuple()
            return
        if resume_dir:
            found = resolve_run(resume_dir, settings, visitor)  # never another session's run, never a typed path
            if found is None:
                yield BatchView(status="❌ Nothing to resume under that name: pick a run from the list.").as_tuple()
                return
            resume_dir = str(found)
        if rerun_of is not None:  # the failures of a finished run this visitor may see (evaluation.rerun)
            parent = resolve_run(rerun_of, settings, visitor) if rerun_of else None
            if parent is None:
                yield BatchView(status="❌ Pick a finished run as Run A to re-run its failures.").as_tuple()
                return
            from evaluation.rerun import failed_task_ids  # its ids size the run before it starts

            try:
                failed = failed_task_ids(parent)
            except Exception as exc:  # noqa: BLE001 - RunError (no details.jsonl): one clear line
                yield BatchView(status=f"❌ {public_text(str(exc), settings)}").as_tuple()
                return
            req = replace(req, source="hub", data_dir="", task_ids=failed, rerun_of=str(parent))
        watch = ListenerWatch(gradio_unread(self.demo, getattr(request, "session_hash", None)),
                              settings.BATCH_UNWATCHED_STOP_S)
        try:
            for view in run_stream(self.runtime, req, control, resume=resume, progress=progress,
                                   resume_dir=resume_dir, session=visitor, watch=watch):
                yield view.as_tuple()
        except Exception as exc:  # noqa: BLE001 - a failure outside the run's own handling: one clear line
            yield BatchView(status=f"❌ {public_text(str(exc), settings)}").as_tuple()

    def halt(self, control: BatchControl) -> str:
        """Stop: no new task starts; what runs finishes and is checkpointed."""
        if not control.running:
            return "No run is going in this session."
        control.stop.set()
        return "⏹️ Stopping: no new task starts; running tasks finish and are checkpointed. Resume continues."

    def runs(self, control: BatchControl, visitor: Session) -> tuple[Any, Any, Any]:
        """The compare lists and the resumable runs this visitor may see."""
        found = list_runs(self.settings, visitor)
        resumable = resumable_choices(self.settings, control.output_dir if control else None, visitor)
        return gr.Dropdown(choices=found), gr.Dropdown(choices=found), gr.Dropdown(choices=resumable, value=None)


def _folder_handler(settings: Settings, h: BatchHandlers, *, rerun: bool) -> Callable[..., Iterator[tuple[Any, ...]]]:
    """The Resume handler, or with `rerun` the Re-run-failures one: the form and a picked run folder as inputs."""
    def handler(source: str, split: str, data_dir: str, level: Any, max_samples: Any, task_ids: str,
                concurrency: Any, question_delay: Any, use_rag: bool, username: str, scorer_name: str | None,
                control_state: BatchControl, visitor: Session, run_dir: str | None = None, iterations: Any = None,
                strategy: Any = None, attempts: Any = None, profile: gr.OAuthProfile | None = None,
                request: gr.Request = None,  # type: ignore[assignment]
                progress: gr.Progress = gr.Progress()) -> Iterator[tuple[Any, ...]]:  # noqa: B008 - gradio injects both
        form = _batch_form(settings, (source, split, data_dir, level, max_samples, task_ids, concurrency,
                                      question_delay, use_rag, username, scorer_name), iterations, strategy, attempts)
        if rerun:
            yield from h.views(form, control_state, visitor, profile, request, progress, resume=False,
                               rerun_of=run_dir or "")
        else:
            yield from h.views(form, control_state, visitor, profile, request, progress, resume=True,
                               resume_dir=run_dir or None)
    return handler


def _batch_form(settings: Settings, fields: tuple[Any, ...], iterations: Any, strategy: Any,
                attempts: Any) -> BatchForm:
    """The form from the tab's fields (source … scorer, in BatchForm's order) and its run fields, checked."""
    *head, scorer_name = fields
    return replace(BatchForm(*head), scorer=scorer_name or DEFAULT_SCORER,
                   max_iterations=run_iterations(iterations, settings), strategy=run_strategy(strategy),
                   attempts=run_attempts(attempts, settings))


def build_batch_tab(demo: gr.Blocks, settings: Settings, runtime: Runtime, session: gr.State) -> BatchTab:
    """The tab's components and their events (inside `demo`, which also lists the runs on page load)."""
    with gr.Tab(BATCH_TAB.title, id=BATCH_TAB.id):
        tab = _layout(settings)
    h = BatchHandlers(demo, settings, runtime)

    # A handler per button (not one with a flag) so each is its own API endpoint with the form as its inputs.
    def evaluate(source: str, split: str, data_dir: str, level: Any, max_samples: Any, task_ids: str,
                 concurrency: Any, question_delay: Any, use_rag: bool, username: str, scorer_name: str | None,
                 control_state: BatchControl, visitor: Session, iterations: Any = None, strategy: Any = None,
                 attempts: Any = None, profile: gr.OAuthProfile | None = None, request: gr.Request = None,  # type: ignore[assignment]
                 progress: gr.Progress = gr.Progress()) -> Iterator[tuple[Any, ...]]:  # noqa: B008 - gradio injects it
        form = _batch_form(settings, (source, split, data_dir, level, max_samples, task_ids, concurrency,
                                      question_delay, use_rag, username, scorer_name), iterations, strategy, attempts)
        yield from h.views(form, control_state, visitor, profile, request, progress, resume=False)

    resume = _folder_handler(settings, h, rerun=False)

    def compare_visible(run_a: str | None, run_b: str | None, visitor: Session) -> str:
        return compare(run_a, run_b, settings, visitor)

    rerun = _folder_handler(settings, h, rerun=True)
    _wire(demo, settings, tab, h, evaluate, resume, compare_visible, session)
    assert tab.strategy_state is not None
    assert tab.attempts_state is not None
    tab.rerun_btn.click(rerun, [*tab.form, tab.scorer_pick, tab.control, session, tab.run_a, tab.iterations_state,
                                tab.strategy_state, tab.attempts_state],
                        tab.outputs, api_name="rerun_failed", concurrency_id="batch",
                        concurrency_limit=settings.BATCH_MAX_RUNNING + 1, show_progress_on=[tab.progress_box]
                        ).then(h.runs, [tab.control, session], [tab.run_a, tab.run_b, tab.resume_pick],
                               api_visibility="private")
    return tab


BATCH_TAB = FunctionTab("📊 Batch evaluation", "batch", build_batch_tab)
"""The "Batch evaluation" tab, as `app.py` lists it."""


def _wire(demo: gr.Blocks, settings: Settings, tab: BatchTab, h: BatchHandlers, evaluate: Any, resume: Any,
          compare_visible: Any, session: gr.State) -> None:
    inputs = [*tab.form, tab.scorer_pick, tab.control, session]
    run_lists = [tab.run_a, tab.run_b, tab.resume_pick]
    scorer, iterations = tab.choosers
    scorer.change(lambda name: name, scorer, tab.scorer_pick, api_visibility="private", queue=False)
    iterations.change(lambda value: value, iterations, tab.iterations_state, api_visibility="private", queue=False)
    assert tab.strategy is not None and tab.strategy_state is not None
    tab.strategy.change(lambda value: value, tab.strategy, tab.strategy_state, api_visibility="private", queue=False)
    assert tab.attempts is not None and tab.attempts_state is not None
    tab.attempts.change(lambda value: value, tab.attempts, tab.attempts_state, api_visibility="private", queue=False)
    kept = [tab.iterations_state, tab.strategy_state, tab.attempts_state]
    # One more than the slots, so an extra run reaches the handler and hears "busy" instead of queueing.
    batch_limit = settings.BATCH_MAX_RUNNING + 1
    tab.run_btn.click(evaluate, [*inputs, *kept], tab.outputs, api_name="evaluate",
                      concurrency_id="batch",
                      concurrency_limit=batch_limit, show_progress_on=[tab.progress_box]
                      ).then(h.runs, [tab.control, session], run_lists, api_visibility="private")
    tab.resume_btn.click(resume, [*inputs, tab.resume_pick, *kept], tab.outputs,
                         api_name="resume",
                         concurrency_id="batch",
                         concurrency_limit=batch_limit, show_progress_on=[tab.progress_box]
                         ).then(h.runs, [tab.control, session], run_lists, api_visibility="private")
    tab.halt_btn.click(h.halt, [tab.control], tab.outputs[0], api_name="stop", queue=False)
    tab.refresh_btn.click(h.runs, [tab.control, session], run_lists, api_visibility="private", queue=False)
    demo.load(h.runs, [tab.control, session], run_lists, api_visibility="private", queue=False)
    tab.compare_btn.click(compare_visible, [tab.run_a, tab.run_b, session], tab.comparison, api_name="compare",
                          concurrency_id="light")
