"""A run against the Agents Course Unit 4 scoring API that learns each answer's verdict at once.

The API (client: `evaluation.scoring_client`) grades in bulk only, by **exact match** (not GAIA's
quasi-exact scorer). To know whether each task was right as soon as it is answered,
`run_api_evaluation` submits cumulatively: after every task, all answers so far; the change in
`correct_count` is the new answer's verdict. A submission that fails leaves its tasks pending until
the next one succeeds; if the count then rose by all or none of them, they are resolved, otherwise
they stay unknown (never guessed). The server's verdicts are the truth of the run: records carry
them as a `Score` of the scorer `SERVER_SCORER`, and no local score stands in for a missing one.

A task that ended with an error is not submitted (as in the course's template); network trouble is
retried and reported, never fatal: the run keeps going and the result lists what failed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.events import Solution
from config import Settings
from evaluation.dataset import Sample
from evaluation.failures import failure_category
from evaluation.limiter import RateLimiter
from evaluation.ordering import plan_order
from evaluation.records import TaskRecord
from evaluation.report import summarize
from evaluation.run_folder import RunFolder
from evaluation.scorer import Score
from evaluation.scoring_client import ApiQuestion, ScoringAPIClient, ScoringAPIError
from evaluation.task_loop import Progress, ProgressTracker, SolveOptions, TaskLoop, notify

__all__ = ["SERVER_SCORER", "ApiQuestion", "ApiRunResult", "ScoringAPIClient", "ScoringAPIError", "Submission",
           "agent_code_for", "run_api_evaluation"]

SERVER_SCORER = "scoring API (exact match)"
"""The scorer named on a record whose verdict came from the server's count."""

if TYPE_CHECKING:
    from agent.pipeline import Pipeline

log = logging.getLogger(__name__)


@dataclass
class Submission:
    """What the API said after one cumulative submission."""

    task_id: str
    submitted: int
    correct_count: int | None = None
    score: float | None = None
    correct: bool | None = None
    message: str = ""
    error: str | None = None


@dataclass
class ApiRunResult:
    """A scoring-API run: per-task records (correct from the count deltas), each submission, the last verdict."""

    records: list[TaskRecord]
    submissions: list[Submission]
    response: dict[str, Any] | None
    output_dir: Path
    stopped: bool = False
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The final verdict plus what the run knows per task (for the app and the CLI)."""
        known = [r for r in self.records if r.correct is not None]
        data = dict(self.response or {})
        data.setdefault("message", "No submission succeeded." if self.response is None else "")
        data.update(answered=len(self.records), verdict_known=len(known),
                    correct_known=sum(bool(r.correct) for r in known),
                    stopped=self.stopped, errors=list(self.errors), output_dir=str(self.output_dir))
        return data


class _Scoreboard:
    """Cumulative submission state; one submission at a time, in finishing order."""

    def __init__(self, client: ScoringAPIClient, username: str, agent_code: str) -> None:
        self.client, self.username, self.agent_code = client, username, agent_code
        self.answers: dict[str, str] = {}
        self.pending: list[TaskRecord] = []
        self.correct_count = 0
        self.response: dict[str, Any] | None = None
        self.submissions: list[Submission] = []
        self.lock = threading.Lock()

    def add(self, record: TaskRecord) -> Submission:
        """Submit everything answered so far including `record`; resolve the verdicts the count reveals."""
        with self.lock:
            self.answers[record.task_id] = record.predicted
            self.pending.append(record)
            return self._submit(record.task_id)

    def flush(self) -> None:
        """A last submission when the latest one failed (so the API holds every answer)."""
        with self.lock:
            if self.pending and self.answers:
                self._submit(self.pending[-1].task_id)

    def _submit(self, task_id: str) -> Submission:
        entry = Submission(task_id=task_id, submitted=len(self.answers))
        self.submissions.append(entry)
        try:
            verdict = self.client.submit(self.username, self.agent_code, self.answers)
        except ScoringAPIError as exc:
            entry.error = str(exc)
            return entry
        self.response = verdict
        count = int(verdict["correct_count"])
        delta = count - self.correct_count
        entry.correct_count, entry.message = count, str(verdict.get("message", ""))
        entry.score = verdict.get("score") if isinstance(verdict.get("score"), (int, float)) else None
        if delta in (0, len(self.pending)):
            for rec in self.pending:
                rec.set_score(Score(delta > 0, SERVER_SCORER, note=f"correct_count {count}"))
        else:
            log.warning("correct_count rose by %d over %d pending answers: their verdicts stay unknown",
                        delta, len(self.pending))
        entry.correct = next((r.correct for r in self.pending if r.task_id == task_id), None)
        self.pending = []
        self.correct_count = count
        return entry


def agent_code_for(settings: Settings, given: str | None = None) -> str:
    """The `agent_code` link to submit: `given`, else on a Space its code URL (as the course's template), else ''."""
    if given:
        return given
    return f"https://huggingface.co/spaces/{settings.SPACE_ID}/tree/main" if settings.SPACE_ID else ""


def run_api_evaluation(username: str, agent_code: str, pipeline: Pipeline, settings: Settings, *,
                       concurrency: int | None = None, on_progress: Callable[[Progress], None] | None = None,
                       stop: threading.Event | None = None, client: ScoringAPIClient | None = None,
                       output_dir: Path | None = None, use_rag: bool = True) -> ApiRunResult:
    """Fetch the questions, solve them concurrently through the shared limiter, submit after each one.

    `agent_code` '' means `agent_code_for(settings)` (the Space's code link on a Space).
    """
    # The folder is made only once there are questions: a run that could not start leaves no empty folder.
    out = Path(output_dir or Path(settings.OUTPUT_DIR) / f"api-{datetime.now().strftime('%Y%m%d-%H%M%S')}").resolve()
    client = client or ScoringAPIClient(settings.SCORING_API_URL, timeout=60.0, retries=3)
    stop = stop or threading.Event()
    if not username.strip():
        return ApiRunResult([], [], None, out, errors=["A Hugging Face username is required to submit."])
    agent_code = agent_code_for(settings, agent_code)
    try:
        questions = client.questions()
    except ScoringAPIError as exc:
        return ApiRunResult([], [], None, out, errors=[*client.problems[:-1], f"Could not fetch the questions: {exc}"])
    out.mkdir(parents=True, exist_ok=True)
    board = _Scoreboard(client, username, agent_code)
    levels = {q.task_id: q.level for q in questions}
    errors: list[str] = []
    solutions: dict[str, Solution] = {}

    def submit(record: TaskRecord, solution: Solution) -> None:
        record.level = levels[record.task_id]
        solutions[record.task_id] = solution
        if record.error:  # not submitted (the course's template skips them too): its verdict stays unknown
            errors.append(f"{record.task_id}: not submitted, the task ended with an error: {record.error}")
        elif (submission := board.add(record)).error:
            errors.append(f"{record.task_id}: submission failed: {submission.error}")
        record.failure_category = failure_category(solution, record.score)

    limiter = RateLimiter.from_settings(settings, stop=stop)
    loop = TaskLoop(pipeline.with_gate(limiter), settings, RunFolder(out, session="api").checkpoint, stop,
                    SolveOptions(use_rag=use_rag), prepare=_downloader(client, out / "files", errors), on_record=submit)
    tracker = ProgressTracker(len(questions))
    notify(on_progress, tracker.progress())
    samples = [Sample(task_id=q.task_id, question=q.question, level=q.level or 0, final_answer="?",
                      file_name=q.file_name) for q in questions]
    workers = concurrency or settings.BATCH_CONCURRENCY
    records = loop.run(plan_order(samples, workers), concurrency=workers, tracker=tracker,
                       on_progress=on_progress, thread_name="api-task")
    board.flush()
    # A late submission may have resolved earlier tasks: settle every category on the final verdicts.
    for record in records:
        record.failure_category = failure_category(solutions[record.task_id], record.score)
    order = {q.task_id: i for i, q in enumerate(questions)}
    records.sort(key=lambda r: order[r.task_id])
    stopped = stop.is_set() and len(records) < len(questions)
    result = ApiRunResult(records, board.submissions, board.response, out, stopped,
                          errors=_unique([*errors, *client.problems]))
    _write_outputs(result, settings)
    return result


def _downloader(client: ScoringAPIClient, folder: Path, errors: list[str]) -> Callable[[Sample], Sample]:
    """A task's `prepare`: its attachment fetched into `folder`; a failed download is an error, the task still runs."""

    def download(sample: Sample) -> Sample:
        if not sample.file_name:
            return sample
        try:
            path = client.download_file(sample.task_id, folder, sample.file_name)
        except ScoringAPIError as exc:
            errors.append(f"{sample.task_id}: attachment {sample.file_name} not downloaded: {exc}")
            return sample
        return replace(sample, file_path=path)

    return download


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _write_outputs(result: ApiRunResult, settings: Settings) -> None:
    """The run folder's files (`evaluation.outputs`), plus submissions.jsonl."""
    starts = [r.started_at for r in result.records]
    ends = [r.finished_at for r in result.records]
    elapsed = round(max(ends) - min(starts), 3) if result.records else 0.0
    summary = summarize(result.records, elapsed_s=elapsed, meta={
        "source": "scoring API", "verdicts": SERVER_SCORER, "api_url": settings.SCORING_API_URL,
        "model": settings.MODEL_NAME,
        "api_message": (result.response or {}).get("message", ""), "api_score": (result.response or {}).get("score"),
        "stopped": result.stopped})
    summary.api = result.to_dict()
    RunFolder(result.output_dir).write_outputs(result.records, summary,
                                               tables={"submissions.jsonl": [asdict(s) for s in result.submissions]})
