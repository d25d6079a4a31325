"""One evaluated task, as stored in the checkpoint and details.jsonl."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

from evaluation.scorer import Score

FailureCategory = Literal[
    "correct", "no_tool_result_used", "tool_failed", "iteration_cap", "llm_error", "format_only_miss", "plain_wrong",
    "unscored",
]


@dataclass(kw_only=True)
class TaskRecord:
    """Per-task result: prediction, score, cost and the reason it failed."""

    task_id: str
    question: str
    level: int | None = None
    file_name: str = ""
    file_type: str = ""
    """Attachment extension without the dot ('xlsx'), or '' when the task has none."""
    expected: str | None = None
    """Ground truth; None (or '?') when unknown, e.g. the test split."""
    predicted: str = ""
    correct: bool | None = None
    """None when there is no ground truth to score against."""
    explanation: dict[str, Any] = field(default_factory=dict)
    """The scorer's verdict as a dict (`Score.to_dict()`: rule, normalised forms, format-only miss, scorer)."""
    source: Literal["rag", "agent"] = "agent"
    steps: int = 0
    tools_used: list[str] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    retries: int = 0
    attempts: int = 1
    error: str | None = None
    answer_truncated: bool = False
    """The answer came from a reply the server cut at its length limit (finish_reason "length")."""
    budget_exhausted: bool = False
    """MAX_TOKENS_PER_TASK was passed: the answer is the best-effort one asked for then."""
    cost_usd: float = 0.0
    """Cost of every model call of every attempt (LLM_PRICE_*_PER_MTOK; 0 when the prices are unknown)."""
    limiter_wait_s: float = 0.0
    """Seconds the task's requests waited for the batch's rate limiter."""
    permanent_error: bool = False
    """The error cannot be fixed by asking again: the task was not re-run."""
    failure_category: FailureCategory = "unscored"
    reasoning_trace: str = ""
    """Short human-readable trace for results.jsonl's reasoning_trace."""
    started_at: float = 0.0
    finished_at: float = 0.0
    """Unix timestamps of the task's start and end."""

    @property
    def score(self) -> Score | None:
        """The verdict as a typed Score; None when the task is unscored."""
        return None if self.correct is None else Score.from_dict(self.explanation, self.correct)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TaskRecord:
        """Rebuild from `to_dict()` output, ignoring unknown keys."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})
