"""The Agents Course Unit 4 scoring API: a client, and a run that learns each answer's verdict at once.

The API (`GET /questions`, `GET /files/{task_id}`, `POST /submit`) grades in bulk only. To know
whether each task was right as soon as it is answered, `run_api_evaluation` submits cumulatively:
after every task, all answers so far; the change in `correct_count` is the new answer's verdict.
A submission that fails leaves its tasks pending until the next one succeeds; if the count then rose
by all or none of them, they are resolved, otherwise they stay unknown (never guessed).

Network trouble (timeouts, connection errors, 5xx/429, malformed JSON) is retried with backoff and
reported; it is never fatal: the run keeps going and the result lists what failed.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from agent.events import Solution
from config import Settings
from evaluation.checkpoint import CHECKPOINT_NAME, Checkpoint
from evaluation.dataset import Sample
from evaluation.failures import failure_category
from evaluation.limiter import RateLimiter
from evaluation.outputs import write_outputs
from evaluation.records import TaskRecord
from evaluation.report import summarize
from evaluation.task_loop import Progress, ProgressTracker, TaskLoop, notify

if TYPE_CHECKING:
    from agent.pipeline import Pipeline

log = logging.getLogger(__name__)


class ScoringAPIError(RuntimeError):
    """The scoring API could not be used (after retries, or a request it rejected); the message says why."""


@dataclass(frozen=True)
class ApiQuestion:
    """One question as the API lists it."""

    task_id: str
    question: str
    level: int | None = None
    file_name: str = ""


class ScoringAPIClient:
    """Small, retrying client of the scoring API."""

    def __init__(self, base_url: str, timeout: float = 30.0, retries: int = 3, *, backoff: float = 1.0,
                 client: httpx.Client | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.retries = max(0, retries)
        self.backoff = backoff
        self.problems: list[str] = []
        """Every failed attempt, retried or not, in order (shown to the user)."""
        self._http = client or httpx.Client(timeout=timeout, follow_redirects=True)

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._http.close()

    # -- endpoints ----------------------------------------------------------------------------------
    def questions(self) -> list[ApiQuestion]:
        """GET /questions, validated: a list of objects with task_id and question."""
        def parse(response: httpx.Response) -> list[ApiQuestion]:
            data = response.json()
            if not isinstance(data, list):
                raise ValueError(f"expected a JSON list, got {type(data).__name__}")
            out = []
            for i, item in enumerate(data):
                if not isinstance(item, dict) or not item.get("task_id") or not isinstance(item.get("question"), str):
                    raise ValueError(f"item {i} lacks task_id/question")
                level = str(item.get("Level", item.get("level")) or "").strip()
                out.append(ApiQuestion(str(item["task_id"]), item["question"], int(level) if level.isdigit() else None,
                                       str(item.get("file_name") or "")))
            return out

        return self._request("GET", "/questions", parse)

    def download_file(self, task_id: str, dest_dir: Path, file_name: str | None = None) -> Path | None:
        """GET /files/{task_id} into dest_dir/task_id/; None when the task has no file (404)."""
        def parse(response: httpx.Response) -> Path | None:
            if response.status_code == 404:
                return None
            name = file_name or _disposition_name(response.headers.get("content-disposition", "")) or task_id
            folder = Path(dest_dir) / task_id
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / Path(name).name
            path.write_bytes(response.content)
            return path.resolve()

        return self._request("GET", f"/files/{task_id}", parse, ok_statuses=(404,))

    def submit(self, username: str, agent_code: str, answers: Sequence[Mapping[str, str]] | Mapping[str, str]) -> dict:
        """POST /submit; `answers` as [{task_id, submitted_answer}] or {task_id: answer}. Returns the verdict."""
        if isinstance(answers, Mapping):
            answers = [{"task_id": t, "submitted_answer": a} for t, a in answers.items()]
        payload = {"username": username.strip(), "agent_code": agent_code,
                   "answers": [{"task_id": a["task_id"], "submitted_answer": str(a["submitted_answer"])} for a in answers]}

        def parse(response: httpx.Response) -> dict:
            data = response.json()
            if not isinstance(data, dict) or not isinstance(data.get("correct_count"), int):
                raise ValueError("the verdict has no integer correct_count")
            return data

        return self._request("POST", "/submit", parse, json=payload)

    # -- the retry loop -------------------------------------------------------------------------------
    def _request(self, method: str, path: str, parse: Callable[[httpx.Response], Any], *,
                 ok_statuses: tuple[int, ...] = (), **kwargs: Any) -> Any:
        url = self.base_url + path
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                response = self._http.request(method, url, **kwargs)
            except httpx.TimeoutException:
                last = f"{method} {path}: no answer within {self.timeout:g}s"
            except httpx.TransportError as exc:
                last = f"{method} {path}: connection failed ({type(exc).__name__}: {exc})"
            else:
                status = response.status_code
                if status >= 500 or status == 429:
                    last = f"{method} {path}: HTTP {status} {_detail(response)}"
                elif status >= 400 and status not in ok_statuses:
                    message = f"{method} {path}: HTTP {status} {_detail(response)} (not retried)"
                    self.problems.append(message)
                    raise ScoringAPIError(message)
                else:
                    try:
                        return parse(response)
                    except (ValueError, TypeError, KeyError) as exc:
                        last = f"{method} {path}: malformed response ({exc})"
            self.problems.append(last + (f"; retrying ({attempt + 1}/{self.retries})" if attempt < self.retries else ""))
            log.warning("scoring API: %s", self.problems[-1])
        raise ScoringAPIError(f"{last} — gave up after {self.retries + 1} attempt(s)")


def _detail(response: httpx.Response) -> str:
    try:
        data = response.json()
        text = data.get("detail", data) if isinstance(data, dict) else data
    except ValueError:
        text = response.text
    return str(text)[:200]


def _disposition_name(header: str) -> str | None:
    match = re.search(r'filename\*?=(?:UTF-8\'\')?"?([^";]+)"?', header)
    return match.group(1) if match else None


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
        data.update(answered=len(self.records), verdict_known=len(known), correct_known=sum(bool(r.correct) for r in known),
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
                rec.correct = delta > 0
        else:
            log.warning("correct_count rose by %d over %d pending answers: their verdicts stay unknown",
                        delta, len(self.pending))
        entry.correct = next((r.correct for r in self.pending if r.task_id == task_id), None)
        self.pending = []
        self.correct_count = count
        return entry


def run_api_evaluation(username: str, agent_code: str, pipeline: Pipeline, settings: Settings, *,
                       concurrency: int | None = None, on_progress: Callable[[Progress], None] | None = None,
                       stop: threading.Event | None = None, client: ScoringAPIClient | None = None,
                       output_dir: Path | None = None, use_rag: bool = True) -> ApiRunResult:
    """Fetch the questions, solve them concurrently through the shared limiter, submit after each one."""
    out = Path(output_dir or Path(settings.OUTPUT_DIR) / f"api-{datetime.now().strftime('%Y%m%d-%H%M%S')}").resolve()
    out.mkdir(parents=True, exist_ok=True)
    client = client or ScoringAPIClient(settings.SCORING_API_URL, timeout=60.0, retries=3)
    stop = stop or threading.Event()
    if not username.strip():
        return ApiRunResult([], [], None, out, errors=["A Hugging Face username is required to submit."])
    try:
        questions = client.questions()
    except ScoringAPIError as exc:
        return ApiRunResult([], [], None, out, errors=[*client.problems[:-1], f"Could not fetch the questions: {exc}"])
    board = _Scoreboard(client, username, agent_code)
    levels = {q.task_id: q.level for q in questions}
    errors: list[str] = []
    solutions: dict[str, Solution] = {}

    def download(sample: Sample) -> Sample:
        if not sample.file_name:
            return sample
        try:
            path = client.download_file(sample.task_id, out / "files", sample.file_name)
        except ScoringAPIError as exc:
            errors.append(f"{sample.task_id}: attachment {sample.file_name} not downloaded: {exc}")
            return sample
        return replace(sample, file_path=path)

    def submit(record: TaskRecord, solution: Solution) -> None:
        record.level = levels[record.task_id]
        solutions[record.task_id] = solution
        submission = board.add(record)
        if submission.error:
            errors.append(f"{record.task_id}: submission failed: {submission.error}")
        record.failure_category = failure_category(solution, record.correct)

    limiter = RateLimiter.from_settings(settings, stop=stop)
    loop = TaskLoop(pipeline.with_gate(limiter), settings, Checkpoint(out / CHECKPOINT_NAME, session="api"), stop,
                    use_rag=use_rag, prepare=download, on_record=submit)
    tracker = ProgressTracker(len(questions))
    notify(on_progress, tracker.progress())
    samples = [Sample(task_id=q.task_id, question=q.question, level=q.level or 0, final_answer="?",
                      file_name=q.file_name) for q in questions]
    records = loop.run(samples, concurrency=concurrency or settings.BATCH_CONCURRENCY, tracker=tracker,
                       on_progress=on_progress, thread_name="api-task")
    board.flush()
    # A late submission may have resolved earlier tasks: settle every category on the final verdicts.
    for record in records:
        record.failure_category = failure_category(solutions[record.task_id], record.correct)
    order = {q.task_id: i for i, q in enumerate(questions)}
    records.sort(key=lambda r: order[r.task_id])
    stopped = stop.is_set() and len(records) < len(questions)
    result = ApiRunResult(records, board.submissions, board.response, out, stopped,
                          errors=_unique([*errors, *client.problems]))
    _write_outputs(result, settings)
    return result


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _write_outputs(result: ApiRunResult, settings: Settings) -> None:
    """The run folder's files (`evaluation.outputs`), plus submissions.jsonl."""
    starts = [r.started_at for r in result.records]
    ends = [r.finished_at for r in result.records]
    elapsed = round(max(ends) - min(starts), 3) if result.records else 0.0
    summary = summarize(result.records, elapsed_s=elapsed, meta={
        "source": "scoring API", "api_url": settings.SCORING_API_URL, "model": settings.MODEL_NAME,
        "api_message": (result.response or {}).get("message", ""), "api_score": (result.response or {}).get("score"),
        "stopped": result.stopped})
    summary["api"] = result.to_dict()
    write_outputs(result.output_dir, result.records, summary,
                  tables={"submissions.jsonl": [asdict(s) for s in result.submissions]})
