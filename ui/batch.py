"""Batch tab logic: load tasks, run the evaluation runner in a worker thread, stream its progress.

The runner does the work (concurrency, rate limiting, checkpoint, scoring, reports); this module only
turns its `on_progress` callbacks into table refreshes and a progress bar, and its output folder into
downloads. Stop sets the session's stop Event; Resume reruns with `resume=True` in the same folder.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from config import Settings, Strategy
from evaluation.records import TaskRecord
from evaluation.run_folder import RunFolder
from evaluation.scorer import DEFAULT_SCORER, SCORERS, scorer_label
from evaluation.selection import TaskSelection
from ui.background import BatchControl, Finished, Tick, iterate_in_thread
from ui.forms import LEVELS, SOURCE_LABELS, SOURCES, BatchForm, BatchRequest, FormError, Source, parse_level
from ui.run_fields import cost_line
from ui.runtime import AgentUnavailable, Runtime
from ui.session import Session, local_folder_refusal, public_text
from ui.status import progress_line, run_summary
from ui.tables import merge_record, parse_task_ids, record_rows
from ui.text import shown
from visitors.batch_guard import ListenerWatch, busy_message, size_refusal

DOWNLOADS = ("report.md", "results.jsonl", "SUBMISSION_GUIDE.md", "details.jsonl", "summary.json")
SCORER_CHOICES = [(scorer_label(name), name) for name in SCORERS]
"""The scorer dropdowns' (label, SCORERS name) choices."""
FOLDER_HELP = "Enter the path of a local GAIA folder (it contains 2023/<split>/metadata.parquet or metadata.jsonl)."

ProgressFn = Callable[..., Any]


@dataclass
class BatchView:
    """One refresh of the batch tab's outputs."""

    status: str = ""
    rows: list[list[Any]] = field(default_factory=list)
    summary: str = ""
    chart: str | None = None
    files: list[str] = field(default_factory=list)

    def as_tuple(self) -> tuple[str, list[list[Any]], str, str | None, list[str]]:
        """Values for (status Markdown, table, summary Markdown, chart image, files); the status escaped (`shown`)."""
        return shown(self.status), self.rows, self.summary, self.chart, self.files


def load_samples(req: BatchRequest, settings: Settings) -> list[Any]:
    """The requested tasks from a local folder or the hub, level- and id-filtered, cut to max_samples."""
    from evaluation.dataset import load_split

    data_dir = None
    if req.source == "local":
        if not req.data_dir.strip():
            raise FormError(FOLDER_HELP)
        data_dir = Path(req.data_dir.strip()).expanduser()
    return req.choose(load_split(req.split, data_dir=data_dir, settings=settings))


def new_output_dir(settings: Settings, req: BatchRequest) -> Path:
    """A fresh run folder under OUTPUT_DIR, named by time and split."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    name = "api" if req.source == "api" else req.split
    base = Path(settings.OUTPUT_DIR) / f"app-{stamp}-{name}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path


def finished_view(output_dir: Path, records: list[TaskRecord], status: str) -> BatchView:
    """The final refresh: summary (report.md), accuracy chart and downloadable files."""
    report = output_dir / "report.md"
    summary_json = output_dir / "summary.json"
    run = RunFolder(output_dir).summary()
    if report.is_file():
        # The chart is shown beside the table; its relative link would not resolve in the app.
        summary = re.sub(r"!\[[^\]]*\]\([^)]*\)\n?", "", report.read_text(encoding="utf-8"))
    elif summary_json.is_file():
        summary = "```json\n" + summary_json.read_text(encoding="utf-8") + "\n```"
    else:
        summary = "(the runner wrote no report)"
    if run is not None:  # a damaged summary.json: the report below still says what there is
        status += "  \n" + run_summary(run)
        notes = (cost_line(run), run.meta.get("stopped_reason"))
        status += "".join(f"  \n{line}" for line in notes if line)
    status += f"  \nRun folder: `{output_dir.name}` (in {output_dir.parent})"
    chart = output_dir / "accuracy.png"
    files = [str(output_dir / name) for name in DOWNLOADS if (output_dir / name).is_file()]
    return BatchView(status=status, rows=record_rows(records), summary=summary,
                     chart=str(chart) if chart.is_file() else None, files=files)


def run_stream(runtime: Runtime, req: BatchRequest, control: BatchControl, *, resume: bool = False,
               progress: ProgressFn | None = None, resume_dir: str | None = None, session: Session | None = None,
               watch: ListenerWatch | None = None) -> Iterator[BatchView]:
    """Run the batch (or resume it) and yield a view after each finished task, then the final view.

    A resume continues `resume_dir` (a run picked from the runs folder) or else this session's last run,
    with the tasks and data source that run recorded (its run.json), not the form's.
    `session` gets the run folder (the lists show it) and copies of the downloads; `watch` stops a run
    nobody reads (see visitors.batch_guard). Messages never show absolute server paths.
    """
    for view in _guarded_stream(runtime, req, control, resume, progress, resume_dir, session, watch):
        view.status = public_text(view.status, runtime.settings)
        if session is not None:
            view.chart = session.publish(view.chart) if view.chart else None
            view.files = [session.publish(f) for f in view.files]
        yield view


def _guarded_stream(runtime: Runtime, req: BatchRequest, control: BatchControl, resume: bool,
                    progress: ProgressFn | None, resume_dir: str | None, session: Session | None,
                    watch: ListenerWatch | None) -> Iterator[BatchView]:
    settings = runtime.settings
    if control.running:
        yield BatchView(status="A run is already going in this session: stop it first.")
        return
    resume_folder = (resume_dir or control.output_dir) if resume else None
    if resume and not resume_folder:
        yield BatchView(status="Nothing to resume: pick a run from the list of resumable runs (or start one).")
        return
    if resume_folder and not Path(resume_folder).is_dir():
        yield BatchView(status=f"❌ Nothing to resume: {resume_folder} does not exist (refresh the list).")
        return
    api = req.source == "api" and not resume
    if not resume and req.source == "local" and not req.data_dir.strip():
        yield BatchView(status="❌ " + FOLDER_HELP)
        return
    if api and not req.username.strip():
        yield BatchView(status="❌ The scoring API needs your Hugging Face username: "
                               "log in, or type it in the username box.")
        return
    if not settings.llm_configured:
        yield BatchView(status="❌ " + settings.llm_missing_message())
        return
    if not resume and req.source == "local" and (refused := local_folder_refusal(req.data_dir, settings, session)):
        yield BatchView(status="❌ " + refused)
        return
    if not api and not resume:
        selected = len(req.task_ids) if req.task_ids else None
        if selected is None and (req.max_samples is None or req.max_samples > settings.BATCH_MAX_TASKS):
            with contextlib.suppress(Exception):  # a folder that cannot be read: the run reports it as before
                selected = len(load_samples(req, settings))
        if selected is not None and (too_many := size_refusal(selected, settings)):
            yield BatchView(status=too_many)
            return
    if not runtime.batch_slots.take(settings.BATCH_MAX_RUNNING):
        yield BatchView(status=busy_message(settings))
        return
    try:
        yield from _run(runtime, req, control, resume, resume_folder, api, progress, session, watch)
    finally:
        runtime.batch_slots.give()


def _run(runtime: Runtime, req: BatchRequest, control: BatchControl, resume: bool, resume_folder: str | None,
         api: bool, progress: ProgressFn | None, session: Session | None,
         watch: ListenerWatch | None) -> Iterator[BatchView]:
    settings = runtime.settings
    yield BatchView(
        status="⏳ Waiting for the agent to finish loading…" if not runtime.ready.is_set() else "⏳ Starting…"
    )
    try:
        pipeline = runtime.pipeline()
    except AgentUnavailable as exc:
        yield BatchView(status=f"❌ {exc}")
        return
    output_dir = Path(resume_folder) if resume_folder else new_output_dir(settings, req)
    control.output_dir = str(output_dir)
    if session is not None:
        session.note_run(output_dir)
    control.stop.clear()
    control.running, control.unwatched = True, False
    try:
        if api:
            yield from _api_stream(runtime, pipeline, req, control, output_dir, progress, watch)
        else:
            yield from _runner_stream(runtime, pipeline, req, control, output_dir, resume, progress, watch)
    except Exception as exc:  # noqa: BLE001 - RunError, DatasetError, a failed write: one clear line
        yield BatchView(status=f"❌ {exc}")
    finally:
        # Also reached when the tab closes or the event is cancelled: no run goes on that nobody watches
        # (what finished is checkpointed; Resume, or the CLI's --resume on the folder, continues it).
        control.stop.set()
        control.running = False


def _unwatched(item: Any, control: BatchControl, watch: ListenerWatch | None) -> bool:
    """True for a tick; stops the run (as Stop does) once nobody has read its updates for the grace period."""
    if not isinstance(item, Tick):
        return False
    if watch is not None and not control.stop.is_set() and not watch.listening():
        control.stop.set()
        control.unwatched = True
    return True


def _runner_stream(runtime: Runtime, pipeline: Any, req: BatchRequest, control: BatchControl, output_dir: Path,
                   resume: bool, progress: ProgressFn | None, watch: ListenerWatch | None) -> Iterator[BatchView]:
    from evaluation.runner import RunConfig, run_evaluation

    settings = runtime.settings
    data_dir = Path(req.data_dir.strip()).expanduser() if req.source == "local" else None
    chosen = req.fields()
    if resume and RunFolder(output_dir).info() is not None:  # the run's own selection (filled in by the runner)
        chosen, data_dir = TaskSelection(split=req.split).fields(), None
    config = RunConfig(**chosen, **req.options(), data_dir=data_dir, output_dir=output_dir, resume=resume)
    if resume:  # a resume scores as the run's run.json says
        config = replace(config, scorer=None)
    if req.rerun_of and not resume:  # the failures of a finished run, its tool calls answered from its record
        from evaluation.rerun import rerun_config

        config = rerun_config(Path(req.rerun_of), replace(config, replay_from=Path(req.rerun_of), scorer=None))
    records: list[TaskRecord] = []
    yield BatchView(status=f"▶️ Loading the tasks… (run folder `{output_dir.name}`)")
    warn = "" if resume else missing_note(req, settings)
    work = iterate_in_thread(lambda report: run_evaluation(config, settings, pipeline, on_progress=report,
                                                           stop=control.stop), tick_s=1.0)
    for item in work:
        if _unwatched(item, control, watch):
            continue
        if isinstance(item, Finished):
            result = item.value
            final = list(result.records) or records
            selected = result.summary.meta.get("tasks_selected") or len(final)
            line = _line_from_records(final, int(selected), result.summary.elapsed_s)
            why = " (nobody was reading its progress)" if control.unwatched else ""
            line = f"⏹️ {line} — stopped{why} (press Resume to continue)" if result.stopped else "🏁 " + line
            yield finished_view(Path(result.output_dir), final, line + warn)
            return
        if getattr(item, "last", None) is not None:
            records = merge_record(records, item.last)
        line = progress_line(item.done, item.total, item.correct, item.scored, item.errors, item.elapsed_s, item.eta_s)
        _report(progress, item, line)
        stopping = " · stopping after the running tasks…" if control.stop.is_set() else ""
        yield BatchView(status="▶️ " + line + stopping + warn, rows=record_rows(records))
        _report(progress, item, line)  # again: the browser drops the bar when the yielded values arrive


def missing_note(req: BatchRequest, settings: Settings) -> str:
    """`  ⚠️ 2 task(s) run without their attachment (missing on disk: a.xlsx, b.mp3)`, or '' (nothing missing)."""
    try:
        samples = load_samples(req, settings)
    except Exception:  # noqa: BLE001 - the run itself reports a folder it cannot read
        return ""
    missing = [s for s in samples if getattr(s, "attachment_missing", False)]
    refused = [s for s in samples if getattr(s, "attachment_error", "")]
    if not missing and not refused:
        return ""
    names = ", ".join(f"`{s.file_name}`" for s in (missing + refused)[:6])
    more = f" and {len(missing) + len(refused) - 6} more" if len(missing) + len(refused) > 6 else ""
    return (f"  \n⚠️ {len(missing) + len(refused)} task(s) run without their attachment (missing on disk or "
            f"refused: {names}{more}).")


def _report(progress: ProgressFn | None, item: Any, line: str) -> None:
    """Move the progress bar (done / total, with the counts and ETA as its text)."""
    if progress is not None:
        progress((item.done, item.total), desc=line, unit="tasks")


def _line_from_records(records: list[TaskRecord], total: int, elapsed_s: float | None) -> str:
    """The final progress line; its time is the run's wall time (the summary's), as during the run."""
    scored = [r for r in records if r.correct is not None]
    correct = sum(bool(r.correct) for r in scored)
    errors = sum(r.error is not None for r in records)
    elapsed = float(elapsed_s) if elapsed_s is not None else sum(r.latency_s for r in records)
    return progress_line(len(records), max(total, len(records)), correct, len(scored), errors, elapsed, 0.0)


def _api_stream(runtime: Runtime, pipeline: Any, req: BatchRequest, control: BatchControl, output_dir: Path,
                progress: ProgressFn | None, watch: ListenerWatch | None) -> Iterator[BatchView]:
    from evaluation.scoring_api import run_api_evaluation

    settings = runtime.settings
    agent_code = f"https://huggingface.co/spaces/{settings.SPACE_ID}/tree/main" if settings.SPACE_ID else "local run"
    records: list[TaskRecord] = []
    yield BatchView(status=f"▶️ Fetching the questions from {settings.SCORING_API_URL} for {req.username}…")
    work = iterate_in_thread(lambda report: run_api_evaluation(
        req.username.strip(), agent_code, pipeline, settings, concurrency=req.concurrency or 1, on_progress=report,
        stop=control.stop, output_dir=output_dir, use_rag=req.use_rag), tick_s=1.0)
    for item in work:
        if _unwatched(item, control, watch):
            continue
        if isinstance(item, Finished):
            yield api_result_view(item.value)
            return
        if getattr(item, "last", None) is not None:
            records = merge_record(records, item.last)
        line = progress_line(item.done, item.total, item.correct, item.scored, item.errors, item.elapsed_s, item.eta_s)
        _report(progress, item, line)
        yield BatchView(status="▶️ " + line + " (verdicts from each cumulative submission)", rows=record_rows(records))
        _report(progress, item, line)


def api_result_view(result: Any) -> BatchView:
    """The scoring API's verdict, each submission's result, the problems, and the run's files."""
    data = result.to_dict()
    score = data.get("score")
    head = f"**{data.get('message') or 'No verdict.'}**"
    if score is not None:
        head += (f"\n\nScore: **{score}%** · correct: "
                 f"{data.get('correct_count', '?')}/{data.get('total_attempted', '?')}")
    lines = ["| task | answers submitted | correct count | this answer | note |", "| --- | ---: | ---: | :---: | --- |"]
    for sub in result.submissions:
        mark = "?" if sub.correct is None else ("✅" if sub.correct else "❌")
        note = (sub.error or sub.message or "").replace("|", "\\|").replace("\n", " ")[:120]
        count = "" if sub.correct_count is None else sub.correct_count
        lines.append(f"| {sub.task_id[:8]} | {sub.submitted} | {count} | {mark} | {note} |")
    summary = head + "\n\n" + "\n".join(lines)
    if result.errors:
        summary += "\n\n**Problems:**\n" + "\n".join(f"- {e}" for e in result.errors)
    out = Path(result.output_dir)
    files = [str(out / n) for n in (*DOWNLOADS, "submissions.jsonl") if (out / n).is_file()]
    chart = out / "accuracy.png"
    if result.response is None and result.errors:  # nothing reached the scoring API: a failed run, not a finish
        problem = result.errors[-1]
        return BatchView(status=f"❌ The scoring API run failed: {problem}", summary=summary,
                         rows=record_rows(result.records), files=files)
    state = "⏹️ Stopped" if result.stopped else "🏁 Submitted"
    status = f"{state}: {data.get('answered', 0)} answered · {data.get('correct_known', 0)} known correct"
    if out.is_dir():
        status += f"  \nRun folder: `{out.name}` (in {out.parent})"
    return BatchView(status=status, rows=record_rows(result.records), summary=summary,
                     chart=str(chart) if chart.is_file() else None, files=files)


def make_request(source: str, split: str, data_dir: str, level: Any, max_samples: Any, task_ids: str,
                 concurrency: Any, question_delay: Any, use_rag: bool, username: str,
                 scorer: str | None = DEFAULT_SCORER, max_iterations: int | None = None,
                 strategy: Strategy | None = None, attempts: int | None = None) -> BatchRequest:
    """Validate the form's raw values (from the UI or an API client) into a BatchRequest; FormError if unusable."""
    return BatchForm(source, split, data_dir, level, max_samples, task_ids, concurrency, question_delay, use_rag,
                     username, scorer or DEFAULT_SCORER, max_iterations, strategy, attempts).request(parse_task_ids)


__all__ = ["DOWNLOADS", "FOLDER_HELP", "LEVELS", "SCORER_CHOICES", "SOURCES", "SOURCE_LABELS", "BatchForm",
           "BatchRequest", "BatchView", "FormError", "Source", "make_request", "parse_level", "run_stream"]
