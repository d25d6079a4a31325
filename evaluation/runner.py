"""The batch runner: many GAIA tasks through `Pipeline.solve()` at once, at the provider's pace, losing none.

What it adds around `solve()` and nothing more:
- the shared task loop (`evaluation.task_loop`: threads, retries, checkpoint, progress), all tasks
  sharing ONE `RateLimiter` through `pipeline.with_gate()`;
- with concurrency 1, `question_delay` between task starts (the seed's sequential mode);
- `resume` skips recorded tasks (with `retry_errors`, not those recorded with an error) and scores with
  the folder's own scorer (run.json): asking for another one is refused, a folder never mixes verdicts;
- a set `stop` event lets no new task or model request start; tasks cut short that way are not
  recorded (a resume runs them), tasks that finished are;
- the cost cap (`evaluation.cost_cap`): once the run's total reaches it no new task starts, running
  ones finish, and the summary says why the rest are left;
- at the end (also after a stop): the run folder's files (`evaluation.outputs`), all rebuilt from
  the checkpoint so each task appears exactly once.
The run directory itself (run.json, checkpoint, cost, summary) is a `RunFolder` (`evaluation.run_folder`).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from config import Settings, Strategy
from evaluation.checkpoint import CHECKPOINT_NAME, FolderBusy, session_wall_time
from evaluation.cost_cap import CostCap
from evaluation.dataset import Sample, load_split
from evaluation.limiter import RateLimiter
from evaluation.ordering import plan_order, recorded_durations
from evaluation.records import TaskRecord
from evaluation.report import summarize
from evaluation.rerun import record_lineage
from evaluation.run_folder import RunError as RunError  # defined beside the folder; re-exported for callers
from evaluation.run_folder import RunFolder
from evaluation.run_info import RunInfo, with_recorded_selection
from evaluation.run_options import RunOptions
from evaluation.run_summary import RunSummary
from evaluation.scorer import DEFAULT_SCORER, SCORERS, UnknownScorer, scorer_named
from evaluation.selection import TaskSelection
from evaluation.start_spacer import StartSpacer
from evaluation.submission import check_submission
from evaluation.task_loop import (  # Progress and build_record: re-exported for callers of the runner
    Progress as Progress,
)
from evaluation.task_loop import (
    ProgressCallback,
    ProgressTracker,
    SolveOptions,
    TaskLoop,
    notify,
)
from evaluation.task_loop import build_record as build_record
from tools.core.replay_cache import ToolCache

if TYPE_CHECKING:
    from agent.pipeline import Pipeline
    from application import Application

log = logging.getLogger(__name__)


@dataclass
class RunConfig(TaskSelection, RunOptions):
    """Which tasks (the `TaskSelection`), how to solve them (the `RunOptions`), where to keep the run.

    `None` for output_dir means: OUTPUT_DIR/<split>-<timestamp> (or, with resume, the newest run of the split there).
    """

    data_dir: Path | None = None
    """The local GAIA folder; None: the hub (with resume: the folder's recorded source)."""
    output_dir: Path | None = None
    resume: bool = False
    retry_errors: bool = False
    """With resume: solve again the tasks recorded with an error (e.g. after a provider outage); the new record wins."""
    max_cost_usd: float | None = None
    """Cost cap of this invocation (`--max-cost-usd`); None = BATCH_MAX_COST_USD; 0 = none."""
    parent: Path | None = None
    """The run whose failures this run re-runs (`--rerun-failed`, evaluation.rerun); kept in run.json."""
    replay_from: Path | None = None
    """A run folder whose tool cache answers matching tool calls (`--replay`); None: every call live."""


@dataclass
class RunResult:
    """A finished (or stopped) run: every record of its folder, the summary, where the files are."""

    records: list[TaskRecord]
    summary: RunSummary
    output_dir: Path
    stopped: bool
    submission_problems: list[str] = field(default_factory=list)



def resolve_output_dir(config: RunConfig, settings: Settings) -> Path:
    """The run folder: as given; with resume and none given, the newest run of the split; else a new one."""
    if config.output_dir is not None:
        return Path(config.output_dir).expanduser().resolve()
    base = Path(settings.OUTPUT_DIR).expanduser().resolve()
    if config.resume:
        runs = sorted(p.parent for p in base.glob(f"{config.split}-*/{CHECKPOINT_NAME}"))
        if not runs:
            raise RunError(f"Nothing to resume: no {config.split} run with a {CHECKPOINT_NAME} under {base}.")
        return runs[-1]
    return base / f"{config.split}-{datetime.now().strftime('%Y%m%d-%H%M%S')}"


@dataclass
class BatchJob:
    """One session of a batch: what to solve, with what, how fast, and whom to tell (see `run_batch`)."""

    samples: list[Sample]
    pipeline: Pipeline
    config: RunConfig
    settings: Settings
    concurrency: int
    """Tasks solved at once (resolved: never None)."""
    delay: float
    """Seconds between task starts when concurrency is 1 (resolved)."""
    on_progress: ProgressCallback | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    split_samples: Sequence[Sample] | None = None
    """What a test-split export is checked against (None: `samples`)."""


def run_batch(samples: list[Sample], pipeline: Pipeline, config: RunConfig, settings: Settings, *,
              on_progress: ProgressCallback | None = None, stop: threading.Event | None = None,
              split_samples: Sequence[Sample] | None = None) -> RunResult:
    """Solve `samples` concurrently into `config.output_dir` (see the module docstring); return the run.

    `split_samples` (default: `samples`) is what a test-split export is checked against.
    """
    out = resolve_output_dir(config, settings)
    concurrency = config.concurrency or settings.BATCH_CONCURRENCY
    if concurrency < 1:
        raise RunError(f"concurrency must be at least 1, not {concurrency}")
    delay = settings.BATCH_QUESTION_DELAY if config.question_delay is None else config.question_delay
    folder = RunFolder(out, session=uuid.uuid4().hex[:12])
    job = BatchJob(samples, pipeline, config, settings, concurrency, delay, on_progress,
                   stop or threading.Event(), split_samples)
    try:
        with folder.exclusive():
            return _run_locked(folder, job)
    except FolderBusy:
        raise RunError(f"Another run is still writing {out}: wait for it to finish or stop it first.") from None


def _start_folder(folder: RunFolder, job: BatchJob) -> RunConfig:
    """Write (or keep) the folder's run.json for this session; the config with its scorer and strategy."""
    config, settings = job.config, job.settings
    recorded = folder.info()
    scorer_name = run_scorer(config, recorded)
    config = replace(config, scorer=scorer_name, strategy=run_strategy(config, recorded, settings))
    folder.start(RunInfo(split=config.split, data_dir=str(config.data_dir) if config.data_dir else None,
                         level=config.level, max_samples=config.max_samples, task_ids=list(config.task_ids),
                         use_rag=config.use_rag, scorer=scorer_name, max_iterations=config.max_iterations,
                         strategy=config.strategy or "react"))
    if config.max_iterations:
        folder.update(max_iterations=config.max_iterations)  # a resume may set another cap
    record_lineage(folder, config, settings)
    return config


def _run_locked(folder: RunFolder, job: BatchJob) -> RunResult:
    loaded = folder.load()
    if loaded.records and not job.config.resume:
        raise RunError(f"{folder.path} already holds {len(loaded.records)} finished task(s): resume that run "
                       "(--resume) or choose another output directory.")
    config = _start_folder(folder, job)
    settings, concurrency, stop = job.settings, job.concurrency, job.stop
    tool_cache = ToolCache.for_run(settings, folder.path, config.replay_from)
    cost = CostCap(folder, settings.BATCH_MAX_COST_USD if config.max_cost_usd is None else config.max_cost_usd)
    first: dict[str, Sample] = {}
    for sample in job.samples:
        first.setdefault(sample.task_id, sample)  # the first of duplicates, in dataset order
    unique = list(first.values())

    def kept(task_id: str) -> bool:
        record = loaded.records.get(task_id)
        return record is not None and not (config.retry_errors and record.error)

    todo = plan_order([s for s in unique if not kept(s.task_id)], concurrency,
                      recorded_durations(folder.path, config.split))
    previous = [loaded.records[s.task_id] for s in unique if kept(s.task_id)]
    limiter = RateLimiter.from_settings(settings, stop=stop)
    spacer = StartSpacer(job.delay if concurrency == 1 else 0.0, stop=stop)
    if todo:
        job.pipeline.preload()
    tracker = ProgressTracker(len(unique), previous)
    notify(job.on_progress, tracker.progress())

    def prepare(sample: Sample) -> Sample | None:
        limiter.take_thread_wait()  # this thread's waits from here on are this task's
        return sample if cost.may_start() and spacer.wait_turn() else None

    def on_record(record: TaskRecord, _solution: object) -> None:
        record.limiter_wait_s = round(limiter.take_thread_wait(), 3)
        cost.add(record.cost_usd)

    options = SolveOptions(config.use_rag, config.max_iterations, config.strategy, tool_cache)
    loop = TaskLoop(job.pipeline.with_gate(limiter), settings, folder.checkpoint, stop, options,
                    scorer=SCORERS[config.scorer or DEFAULT_SCORER], prepare=prepare, on_record=on_record,
                    attempts=config.attempts or settings.ATTEMPTS)
    loop.run(todo, concurrency=concurrency, tracker=tracker, on_progress=job.on_progress)
    return finalize(folder, unique, config, settings, job.split_samples or unique,
                    stopped=(stop.is_set() or cost.reached) and tracker.done < tracker.total, limiter=limiter,
                    cost=cost, tool_cache=tool_cache)


def run_strategy(config: RunConfig, recorded: RunInfo | None, settings: Settings) -> Strategy:
    """The run's strategy: as asked, else the folder's own (resume), else AGENT_STRATEGY.

    RunError for a resume asking for another strategy than the folder's tasks were solved with.
    """
    if recorded is None:
        return config.strategy or settings.AGENT_STRATEGY
    own: Strategy = "team" if recorded.strategy == "team" else "react"
    if config.strategy is not None and config.strategy != own:
        raise RunError(f"This run folder was solved with the {own!r} strategy: resume it with --strategy {own} "
                       f"(or leave --strategy out), or start a new run folder for {config.strategy!r}; one folder "
                       "never mixes two strategies' answers.")
    return own


def run_scorer(config: RunConfig, recorded: RunInfo | None) -> str:
    """The scorer's name for this run: as asked, else the folder's own (resume), else the official one.

    RunError for an unknown name, or for a resume asking for another scorer than the folder's verdicts came from.
    """
    asked = config.scorer
    if asked is not None:
        try:
            scorer_named(asked)
        except UnknownScorer as exc:
            raise RunError(str(exc)) from None
    if recorded is None:
        return asked or DEFAULT_SCORER
    if asked is not None and asked != recorded.scorer:
        raise RunError(f"This run folder was scored with the {recorded.scorer!r} scorer: resume it with "
                       f"--scorer {recorded.scorer} (or leave --scorer out), or start a new run folder to score "
                       f"with {asked!r}; one folder never mixes two scorers' verdicts.")
    return recorded.scorer


def finalize(folder: RunFolder, samples: Sequence[Sample], config: RunConfig, settings: Settings,
             split_samples: Sequence[Sample], *, stopped: bool, limiter: RateLimiter | None = None,
             cost: CostCap | None = None, tool_cache: ToolCache | None = None) -> RunResult:
    """Rebuild every output file of the run folder from its checkpoint."""
    loaded = folder.load()
    order = {s.task_id: i for i, s in enumerate(samples)}
    records = sorted(loaded.records.values(), key=lambda r: (order.get(r.task_id, len(order)), r.task_id))
    # Both splits: the leaderboard takes validation files too and refuses them incomplete just the same.
    problems = check_submission(records, split_samples)
    for line in problems:
        log.warning("results.jsonl is not a complete %s submission: %s", config.split, line)
    meta: dict[str, Any] = {
        "split": config.split, "model": settings.MODEL_NAME,
        "concurrency": config.concurrency or settings.BATCH_CONCURRENCY,
        "requests_per_minute": settings.LLM_REQUESTS_PER_MINUTE or "adaptive",
        "use_rag": config.use_rag and settings.RAG_ENABLED, "scorer": config.scorer or DEFAULT_SCORER,
        "tasks_selected": len(samples), "sessions": len(loaded.sessions), "stopped": stopped,
        "remaining": sum(1 for s in samples if s.task_id not in loaded.records),
        "max_iterations": config.max_iterations or settings.MAX_ITERATIONS,
        "strategy": config.strategy or settings.AGENT_STRATEGY,
    }
    if cost is not None:
        meta["cost_usd"], meta["max_cost_usd"] = cost.spent_usd, cost.cap_usd
        if stopped and (reason := cost.reason()):
            meta["stopped_reason"] = reason
    if config.parent is not None:
        meta["parent"] = str(config.parent)
    if tool_cache is not None:  # this session's calls: replayed from --replay's record, kept, refused
        meta["tool_cache"] = asdict(tool_cache.stats)
    if limiter is not None:
        stats = limiter.stats()
        meta["rate_limited_429"], meta["limiter_wait_s"] = stats.rate_limited, stats.waited_s
        meta["pacing"], meta["ceiling"] = stats.pacing, stats.ceiling()
        meta["rate_limited_wait_s"] = stats.rejected_wait_s
    summary = summarize(records, elapsed_s=session_wall_time(loaded.sessions), meta=meta)
    summary.submission_check = {"checked": True, "split": config.split, "problems": problems}
    folder.write_outputs(records, summary, guide_for_model=settings.MODEL_NAME)
    return RunResult(records=records, summary=summary, output_dir=folder.path, stopped=stopped,
                     submission_problems=problems)


def run_evaluation(config: RunConfig, settings: Settings, pipeline: Pipeline | None = None, *,
                   on_progress: ProgressCallback | None = None, stop: threading.Event | None = None,
                   app: Application | None = None) -> RunResult:
    """Load the split (local folder or hub), select the tasks, build the pipeline if needed, run the batch.

    A pipeline built here runs on `app` (the entry point's application; None: one of its own, closed at the end).

    A resume reads the run folder's recorded split, data source and selection (`run.json`) for what is not given.
    """
    if config.resume:
        out = resolve_output_dir(config, settings)
        config = replace(with_recorded_selection(config, RunFolder(out).info()), output_dir=out)
    split_samples = load_split(config.split, data_dir=config.data_dir, settings=settings)
    samples = config.choose(split_samples)
    if not samples:
        raise RunError(f"No task matches ({config.where}).")
    if pipeline is None:
        if not settings.llm_configured:
            raise RunError(settings.llm_missing_message())
        from agent.pipeline import Pipeline  # heavy import, only when the caller brings no pipeline

        made = pipeline = Pipeline(settings, app=app)
        try:
            return run_batch(samples, pipeline, config, settings, on_progress=on_progress, stop=stop,
                             split_samples=split_samples)
        finally:
            made.close()
    return run_batch(samples, pipeline, config, settings, on_progress=on_progress, stop=stop,
                     split_samples=split_samples)
