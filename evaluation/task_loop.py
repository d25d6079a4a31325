"""The one task loop both runners share: solve with retry, record, checkpoint, report progress.

`TaskLoop` is what the batch runner (`evaluation.runner`) and the scoring-API runner
(`evaluation.scoring_api`) have in common around `Pipeline.solve()`:
- threads (`solve` blocks), `concurrency` of them, all using the same (gated) pipeline;
- a task that ends with an error is solved again up to `TASK_RETRY_MAX` times, then recorded with it —
  unless the error is permanent (a refused request, an overflow masking cannot fix, the same server error
  twice): asking again would send the identical failing request;
- a set `stop` event lets no new task start; a task cut short by it is not recorded (a resume runs it);
- every finished task goes to the checkpoint at once, then to the progress callback.
What differs between the runners comes in as two hooks: `prepare` (wait for a start slot, download an
attachment) before a task and `on_record` (submit the answer) before its record is checkpointed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent.events import Solution
from config import Settings, Strategy, redact
from evaluation.attempts import fold_attempts, majority, solve_attempts
from evaluation.checkpoint import Checkpoint
from evaluation.dataset import Sample
from evaluation.failures import failure_category, reasoning_summary
from evaluation.records import TaskRecord
from evaluation.scorer import Score, Scorer, official_scorer

if TYPE_CHECKING:
    from agent.pipeline import Pipeline
    from tools.core.replay_cache import ToolCache

log = logging.getLogger(__name__)


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


ProgressCallback = Callable[[Progress], None]
Prepare = Callable[[Sample], "Sample | None"]
"""Called in the task's thread before solving; returns the sample to solve, or None to leave the task undone."""
OnRecord = Callable[[TaskRecord, Solution], None]
"""Called in the task's thread with the finished record (may amend it) and the last attempt, before checkpointing."""


class ProgressTracker:
    """Counts for Progress (done, correct, ETA), updated from one thread."""

    def __init__(self, total: int, previous: Sequence[TaskRecord] = ()) -> None:
        self.total, self.done = total, len(previous)
        self.correct = sum(1 for r in previous if r.correct)
        self.scored = sum(1 for r in previous if r.correct is not None)
        self.errors = sum(1 for r in previous if r.error)
        self.started = time.monotonic()
        self.new = 0

    def add(self, record: TaskRecord) -> Progress:
        """Count one finished task and return the new Progress."""
        self.done += 1
        self.new += 1
        self.correct += bool(record.correct)
        self.scored += record.correct is not None
        self.errors += bool(record.error)
        return self.progress(record)

    def progress(self, last: TaskRecord | None = None) -> Progress:
        """The current Progress; the ETA extrapolates from the tasks finished in this session."""
        elapsed = time.monotonic() - self.started
        remaining = self.total - self.done
        eta = elapsed / self.new * remaining if self.new else None
        return Progress(self.done, self.total, self.correct, self.scored, self.errors, round(elapsed, 2),
                        None if eta is None else round(eta, 1), last)


def notify(on_progress: ProgressCallback | None, progress: Progress) -> None:
    """Call the progress callback; a broken progress display must not end the batch."""
    if on_progress is None:
        return
    try:
        on_progress(progress)
    except Exception:  # noqa: BLE001
        log.exception("progress callback failed")


def build_record(sample: Sample, solutions: list[Solution], *, started_at: float, finished_at: float,
                 settings: Settings, scorer: Scorer = official_scorer) -> TaskRecord:
    """Score the last attempt's answer and fold every attempt's cost into one TaskRecord."""
    sol = solutions[-1]
    expected = sample.final_answer if sample.has_answer else None
    score: Score | None = None if expected is None else scorer(sol.answer or "", expected)
    return TaskRecord(
        task_id=sample.task_id, question=sample.question, level=sample.level, file_name=sample.file_name,
        file_type=sample.file_type, expected=expected, predicted=sol.answer or "", score=score,
        source=sol.source, steps=sol.steps, tools_used=list(sol.tools_used),
        prompt_tokens=sum(s.prompt_tokens for s in solutions),
        completion_tokens=sum(s.completion_tokens for s in solutions),
        latency_s=round(finished_at - started_at, 3), retries=sum(s.retries for s in solutions),
        tries=len(solutions), attempts=[sol.answer or ""], predicted_before_check=sol.answer_before_check,
        pass_at_1=None if score is None else score.correct, pass_at_k=None if score is None else score.correct,
        error=redact(sol.error, settings) if sol.error else None,
        answer_truncated=sol.answer_truncated, budget_exhausted=sol.budget_exhausted,
        cost_usd=round(sum(s.cost_usd for s in solutions), 8), permanent_error=sol.error_permanent,
        strategy=sol.strategy,
        failure_category=failure_category(sol, score),
        reasoning_trace=reasoning_summary(sol, settings), started_at=started_at, finished_at=finished_at,
    )


@dataclass(frozen=True)
class SolveOptions:
    """What every `Pipeline.solve()` of a run gets besides its task: the same for each task, retry and attempt."""

    use_rag: bool = True
    max_iterations: int | None = None
    """The run's iteration cap (None: MAX_ITERATIONS)."""
    strategy: Strategy | None = None
    """The run's strategy (None: AGENT_STRATEGY)."""
    tool_cache: ToolCache | None = None
    """The run's tool-result cache (record, and replay with `--replay`); None: no tool call kept."""

    def keywords(self, spent_tokens: int = 0) -> dict[str, Any]:
        """`Pipeline.solve`'s keyword arguments: what is set here, and the tokens earlier tries spent."""
        given = {"max_iterations": self.max_iterations, "spent_tokens": spent_tokens, "strategy": self.strategy}
        kept: dict[str, Any] = {name: value for name, value in given.items() if value}
        if self.tool_cache is not None:
            kept["tool_cache"] = self.tool_cache
        return {"use_rag": self.use_rag, **kept}


def solve_sample(pipeline: Pipeline, sample: Sample, options: SolveOptions, spent_tokens: int = 0) -> Solution:
    """`solve()` never raises by contract; should it, the task still gets a record instead of vanishing.

    `spent_tokens` (earlier attempts' tokens) count against MAX_TOKENS_PER_TASK.
    """
    if sample.attachment_error:  # metadata pointing outside its split folder: nothing is opened or asked
        return Solution(question=sample.question, answer="", source="agent", task_id=sample.task_id,
                        error=f"bad attachment path: {sample.attachment_error}")
    file_path = str(sample.file_path) if sample.file_path else None
    try:
        return pipeline.solve(sample.question, file_path, sample.task_id, **options.keywords(spent_tokens))
    except Exception as exc:  # noqa: BLE001
        return Solution(question=sample.question, answer="", source="agent", task_id=sample.task_id,
                        error=f"internal error: {type(exc).__name__}: {exc}",
                        strategy=options.strategy or pipeline.settings.AGENT_STRATEGY)


def solve_with_retry(pipeline: Pipeline, sample: Sample, options: SolveOptions, *, retries: int,
                     stop: threading.Event) -> list[Solution] | None:
    """Every attempt at `sample` (up to 1 + `retries`), or None when the stop cut the last one short."""
    solutions: list[Solution] = []
    for _ in range(retries + 1):
        spent = sum(s.total_tokens for s in solutions)
        solutions.append(solve_sample(pipeline, sample, options, spent))
        if stop.is_set() and solutions[-1].error:
            return None  # its model request was refused by the stop: a resume runs it again
        if not solutions[-1].error or stop.is_set() or solutions[-1].error_permanent:
            break
    return solutions


@dataclass
class TaskLoop:
    """How each task of a run is solved, recorded and checkpointed (see the module docstring)."""

    pipeline: Pipeline
    """The pipeline to call, already gated by the run's rate limiter."""
    settings: Settings
    checkpoint: Checkpoint
    stop: threading.Event
    options: SolveOptions = field(default_factory=SolveOptions)
    """What each solve gets besides its task (RAG, iteration cap, strategy, tool cache)."""
    scorer: Scorer = official_scorer
    prepare: Prepare | None = None
    on_record: OnRecord | None = None
    attempts: int = 1
    """Independent attempts per task, voted (ATTEMPTS / --attempts; see evaluation.attempts)."""

    def run_one(self, sample: Sample) -> TaskRecord | None:
        """Solve one task with retries and checkpoint its record; None when the task was left undone."""
        if self.stop.is_set():
            return None
        prepared = self.prepare(sample) if self.prepare is not None else sample
        if prepared is None:
            return None
        started = time.time()
        attempts = solve_attempts(lambda: solve_with_retry(self.pipeline, prepared, self.options,
                                                           retries=self.settings.TASK_RETRY_MAX, stop=self.stop),
                                  self.attempts)
        if attempts is None:
            return None
        chosen = majority([attempt[-1].answer or "" for attempt in attempts])
        solutions = attempts[chosen]
        record = build_record(prepared, solutions, started_at=started, finished_at=time.time(),
                              settings=self.settings, scorer=self.scorer)
        if len(attempts) > 1:
            record = fold_attempts(record, prepared, attempts, chosen, self.scorer)
        if self.on_record is not None:
            self.on_record(record, solutions[-1])
        self.checkpoint.append(record)
        return record

    def run(self, samples: Sequence[Sample], *, concurrency: int, tracker: ProgressTracker,
            on_progress: ProgressCallback | None = None, thread_name: str = "gaia-task") -> list[TaskRecord]:
        """Run `samples` on `concurrency` threads; return the new records in finishing order."""
        records: list[TaskRecord] = []
        with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix=thread_name) as pool:
            pending: set[Future[TaskRecord | None]] = {pool.submit(self.run_one, s) for s in samples}
            try:
                while pending:
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for future in finished:
                        if (record := future.result()) is not None:
                            records.append(record)
                            notify(on_progress, tracker.add(record))
            except BaseException:
                self.stop.set()  # KeyboardInterrupt or a failed checkpoint write: let nothing new start
                raise
        return records
