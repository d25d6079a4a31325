"""The batch runner: many GAIA tasks through `Pipeline.solve()` at once, at the provider's pace, losing none.

What it adds around `solve()` and nothing more:
- threads (`solve` blocks), all sharing ONE `RateLimiter` through `pipeline.with_gate()`;
- with concurrency 1, `question_delay` between task starts (the seed's sequential mode);
- a task that ends with an error is solved again up to `TASK_RETRY_MAX` times, then recorded with it;
- every finished task goes to the checkpoint at once (append + fsync); `resume` skips recorded tasks;
- a set `stop` event lets no new task or model request start; tasks cut short that way are not
  recorded (a resume runs them), tasks that finished are;
- at the end (also after a stop): details.jsonl, results.jsonl, summary.json, report.md + chart,
  SUBMISSION_GUIDE.md, all rebuilt from the checkpoint so each task appears exactly once.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from agent.events import Solution
from config import Settings, redact
from evaluation.checkpoint import CHECKPOINT_NAME, Checkpoint, FolderBusy, session_wall_time, write_jsonl_atomic
from evaluation.dataset import Sample, load_split
from evaluation.failures import failure_category, reasoning_summary
from evaluation.limiter import RateLimiter, StartSpacer
from evaluation.records import TaskRecord
from evaluation.report import summarize, write_report
from evaluation.scorer import explain, question_scorer
from evaluation.submission import check_submission, write_results_jsonl, write_submission_guide

if TYPE_CHECKING:
    from agent.pipeline import Pipeline

log = logging.getLogger(__name__)


class RunError(RuntimeError):
    """A batch cannot start as asked (bad selection, output folder already used, no model); the message says why."""


@dataclass
class RunConfig:
    """What to run and how. `None` for concurrency / question_delay / output_dir means: from settings."""

    split: str = "validation"
    data_dir: Path | None = None
    level: int | None = None
    max_samples: int | None = None
    task_ids: list[str] | None = None
    concurrency: int | None = None
    """Tasks solved at once; None = BATCH_CONCURRENCY."""
    question_delay: float | None = None
    """Minimum seconds between task starts when concurrency is 1; None = BATCH_QUESTION_DELAY."""
    output_dir: Path | None = None
    """None = OUTPUT_DIR/<split>-<timestamp> (or, with resume, the newest run of the split there)."""
    resume: bool = False
    retry_errors: bool = False
    """With resume: solve again the tasks recorded with an error (e.g. after a provider outage); the new record wins."""
    use_rag: bool = True


@dataclass
class Progress:
    """Where a run stands, for progress bars (CLI tqdm, Gradio)."""

    done: int
    total: int
    correct: int
    scored: int
    errors: int
    elapsed_s: float
    eta_s: float | None
    last: TaskRecord | None


@dataclass
class RunResult:
    """A finished (or stopped) run: every record of its folder, the summary, where the files are."""

    records: list[TaskRecord]
    summary: dict[str, Any]
    output_dir: Path
    stopped: bool
    submission_problems: list[str] = field(default_factory=list)


ProgressCallback = Callable[[Progress], None]


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


def select_samples(samples: Sequence[Sample], config: RunConfig) -> list[Sample]:
    """Apply the level, task-id and max-samples filters, keeping dataset order; unknown ids are an error."""
    chosen = [s for s in samples if config.level is None or s.level == config.level]
    if config.task_ids:
        known = {s.task_id for s in chosen}
        if unknown := [t for t in config.task_ids if t not in known]:
            where = f"split {config.split!r}" + (f" level {config.level}" if config.level else "")
            raise RunError(f"Unknown task id(s) for {where}: {', '.join(unknown)}")
        wanted = set(config.task_ids)
        chosen = [s for s in chosen if s.task_id in wanted]
    if config.max_samples is not None:
        if config.max_samples < 1:
            raise RunError(f"max_samples must be at least 1, not {config.max_samples}")
        chosen = chosen[: config.max_samples]
    return chosen


def build_record(sample: Sample, solutions: list[Solution], *, started_at: float, finished_at: float,
                 settings: Settings) -> TaskRecord:
    """Score the last attempt's answer and fold every attempt's cost into one TaskRecord."""
    sol = solutions[-1]
    expected = sample.final_answer if sample.has_answer else None
    correct, explanation = None, {}
    if expected is not None:
        correct = question_scorer(sol.answer, expected)
        explanation = explain(sol.answer, expected).to_dict()
    return TaskRecord(
        task_id=sample.task_id, question=sample.question, level=sample.level, file_name=sample.file_name,
        file_type=sample.file_type, expected=expected, predicted=sol.answer or "", correct=correct,
        explanation=explanation, source=sol.source, steps=sol.steps, tools_used=list(sol.tools_used),
        prompt_tokens=sum(s.prompt_tokens for s in solutions),
        completion_tokens=sum(s.completion_tokens for s in solutions),
        latency_s=round(finished_at - started_at, 3), retries=sum(s.retries for s in solutions),
        attempts=len(solutions), error=redact(sol.error, settings) if sol.error else None,
        failure_category=failure_category(sol, correct, explanation),
        reasoning_trace=reasoning_summary(sol, settings), started_at=started_at, finished_at=finished_at,
    )


def solve_sample(pipeline: "Pipeline", sample: Sample, use_rag: bool) -> Solution:
    """`solve()` never raises by contract; should it, the task still gets a record instead of vanishing."""
    file_path = str(sample.file_path) if sample.file_path else None
    try:
        return pipeline.solve(sample.question, file_path, sample.task_id, use_rag=use_rag)
    except Exception as exc:  # noqa: BLE001
        return Solution(question=sample.question, answer="", source="agent", task_id=sample.task_id,
                        error=f"internal error: {type(exc).__name__}: {exc}")


class ProgressTracker:
    """Counts for Progress (done, correct, ETA), updated from one thread."""

    def __init__(self, total: int, previous: list[TaskRecord]) -> None:
        self.total, self.done = total, len(previous)
        self.correct = sum(1 for r in previous if r.correct)
        self.scored = sum(1 for r in previous if r.correct is not None)
        self.errors = sum(1 for r in previous if r.error)
        self.started = time.monotonic()
        self.new = 0

    def add(self, record: TaskRecord) -> Progress:
        self.done += 1
        self.new += 1
        self.correct += bool(record.correct)
        self.scored += record.correct is not None
        self.errors += bool(record.error)
        return self.progress(record)

    def progress(self, last: TaskRecord | None = None) -> Progress:
        elapsed = time.monotonic() - self.started
        remaining = self.total - self.done
        eta = elapsed / self.new * remaining if self.new else None
        return Progress(self.done, self.total, self.correct, self.scored, self.errors, round(elapsed, 2),
                        None if eta is None else round(eta, 1), last)


def notify(on_progress: ProgressCallback | None, progress: Progress) -> None:
    if on_progress is None:
        return
    try:
        on_progress(progress)
    except Exception:  # noqa: BLE001 - a broken progress display must not end the batch
        log.exception("progress callback failed")


def run_batch(samples: list[Sample], pipeline: "Pipeline", config: RunConfig, settings: Settings, *,
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
    checkpoint = Checkpoint(out / CHECKPOINT_NAME, session=uuid.uuid4().hex[:12])
    try:
        with checkpoint.exclusive():
            return _run_locked(samples, pipeline, config, settings, out, checkpoint, concurrency, delay,
                               on_progress, stop, split_samples)
    except FolderBusy:
        raise RunError(f"Another run is still writing {out}: wait for it to finish or stop it first.") from None


def _run_locked(samples: list[Sample], pipeline: "Pipeline", config: RunConfig, settings: Settings, out: Path,
                checkpoint: Checkpoint, concurrency: int, delay: float, on_progress: ProgressCallback | None,
                stop: threading.Event | None, split_samples: Sequence[Sample] | None) -> RunResult:
    loaded = checkpoint.load()
    if loaded.records and not config.resume:
        raise RunError(f"{out} already holds {len(loaded.records)} finished task(s): resume that run "
                       "(--resume) or choose another output directory.")
    seen: set[str] = set()
    unique = [s for s in samples if not (s.task_id in seen or seen.add(s.task_id))]  # first of duplicates
    def kept(task_id: str) -> bool:
        record = loaded.records.get(task_id)
        return record is not None and not (config.retry_errors and record.error)

    todo = [s for s in unique if not kept(s.task_id)]
    previous = [loaded.records[s.task_id] for s in unique if kept(s.task_id)]
    stop = stop or threading.Event()
    limiter = RateLimiter.from_settings(settings, stop=stop)
    spacer = StartSpacer(delay if concurrency == 1 else 0.0, stop=stop)
    if todo:
        pipeline.preload()
    gated = pipeline.with_gate(limiter)
    tracker = ProgressTracker(len(unique), previous)
    notify(on_progress, tracker.progress())

    def work(sample: Sample) -> TaskRecord | None:
        if stop.is_set() or not spacer.wait_turn():
            return None
        started = time.time()
        solutions: list[Solution] = []
        for _ in range(settings.TASK_RETRY_MAX + 1):
            solutions.append(solve_sample(gated, sample, config.use_rag))
            if stop.is_set() and solutions[-1].error:
                return None  # cut short by the stop (its model request was refused): a resume runs it again
            if not solutions[-1].error or stop.is_set():
                break
        record = build_record(sample, solutions, started_at=started, finished_at=time.time(), settings=settings)
        checkpoint.append(record)
        return record

    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="gaia-task") as pool:
        pending: set[Future] = {pool.submit(work, s) for s in todo}
        try:
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    record = future.result()
                    if record is not None:
                        notify(on_progress, tracker.add(record))
        except BaseException:
            stop.set()  # KeyboardInterrupt or a failed checkpoint write: let nothing new start
            raise

    result = finalize(out, unique, checkpoint, config, settings, split_samples or unique,
                      stopped=stop.is_set() and tracker.done < tracker.total, limiter=limiter)
    return result


def finalize(out: Path, samples: Sequence[Sample], checkpoint: Checkpoint, config: RunConfig, settings: Settings,
             split_samples: Sequence[Sample], *, stopped: bool, limiter: RateLimiter | None = None) -> RunResult:
    """Rebuild every output file of the run folder from its checkpoint."""
    loaded = checkpoint.load()
    order = {s.task_id: i for i, s in enumerate(samples)}
    records = sorted(loaded.records.values(), key=lambda r: (order.get(r.task_id, len(order)), r.task_id))
    write_jsonl_atomic(out / "details.jsonl", [r.to_dict() for r in records])
    problems: list[str] = []
    if config.split == "test" or not any(s.has_answer for s in split_samples):
        problems = check_submission(records, split_samples)
        for line in problems:
            log.warning("results.jsonl is not a complete submission: %s", line)
    write_results_jsonl(records, out / "results.jsonl")
    meta: dict[str, Any] = {
        "split": config.split, "model": settings.MODEL_NAME, "concurrency": config.concurrency or settings.BATCH_CONCURRENCY,
        "requests_per_minute": settings.LLM_REQUESTS_PER_MINUTE or "adaptive",
        "use_rag": config.use_rag and settings.RAG_ENABLED,
        "tasks_selected": len(samples), "sessions": len(loaded.sessions), "stopped": stopped,
        "remaining": sum(1 for s in samples if s.task_id not in loaded.records),
    }
    if limiter is not None:
        stats = limiter.stats()
        meta["rate_limited_429"], meta["limiter_wait_s"] = stats.rate_limited, stats.waited_s
    summary = summarize(records, elapsed_s=session_wall_time(loaded.sessions), meta=meta)
    summary["submission_check"] = {"checked": config.split == "test" or bool(problems), "problems": problems}
    (out / "summary.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False, default=str), encoding="utf-8")
    write_report(records, summary, out)
    write_submission_guide(out, model_name=settings.MODEL_NAME)
    return RunResult(records=records, summary=summary, output_dir=out, stopped=stopped, submission_problems=problems)


def run_evaluation(config: RunConfig, settings: Settings, pipeline: "Pipeline | None" = None, *,
                   on_progress: ProgressCallback | None = None, stop: threading.Event | None = None) -> RunResult:
    """Load the split (local folder or hub), select the tasks, build the pipeline if needed, run the batch."""
    split_samples = load_split(config.split, data_dir=config.data_dir, settings=settings)
    samples = select_samples(split_samples, config)
    if not samples:
        raise RunError(f"No task matches (split {config.split!r}, level {config.level}).")
    if pipeline is None:
        if not settings.llm_configured:
            raise RunError(settings.llm_missing_message())
        from agent.pipeline import Pipeline  # heavy import, only when the caller brings no pipeline

        pipeline = Pipeline(settings)
    return run_batch(samples, pipeline, config, settings, on_progress=on_progress, stop=stop,
                     split_samples=split_samples)
