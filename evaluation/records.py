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
    """None when there is no ground truth to score against; always `score.correct` when there is a score."""
    score: Score | None = None
    """The scorer's verdict (which scorer, the official rule's normalised forms, format-only miss); None unscored.

    Stored as the record's `explanation` dict (`Score.to_dict()`), so older files read back unchanged."""
    source: Literal["rag", "agent"] = "agent"
    steps: int = 0
    tools_used: list[str] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    retries: int = 0
    tries: int = 1
    """Solves of the task, retries of failed ones and every attempt included."""
    attempts: list[str] = field(default_factory=list)
    """Each independent attempt's answer (ATTEMPTS / --attempts; one with K = 1); `predicted` is their vote."""
    pass_at_1: bool | None = None
    """The first attempt's answer was right (None unscored)."""
    pass_at_k: bool | None = None
    """Any attempt's answer was right (None unscored)."""
    predicted_before_check: str | None = None
    """The extracted draft when the answer check looked at it (None: no check ran)."""
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
    strategy: str = "react"
    """The strategy that solved it (`react` or `team`; records from before strategies: react)."""
    failure_category: FailureCategory = "unscored"
    reasoning_trace: str = ""
    """Short human-readable trace for results.jsonl's reasoning_trace."""
    started_at: float = 0.0
    finished_at: float = 0.0
    """Unix timestamps of the task's start and end."""

    def __post_init__(self) -> None:
        if self.score is not None:
            self.correct = self.score.correct
        elif self.correct is not None:  # a verdict without its scorer's view: the official scorer's, unexplained
            self.score = Score(self.correct)

    def set_score(self, score: Score | None) -> None:
        """Replace the verdict (`correct` follows it)."""
        self.score, self.correct = score, None if score is None else score.correct

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict; the score is stored as the `explanation` dict in the field's place."""
        data = asdict(self)
        return {("explanation" if k == "score" else k): (self.score.to_dict() if self.score else {}) if k == "score"
                else v for k, v in data.items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TaskRecord:
        """Rebuild from `to_dict()` output (older files too: a missing scorer name is the official one)."""
        names = {f.name for f in fields(cls)} - {"score"}
        known = {k: v for k, v in data.items() if k in names}
        if isinstance(known.get("attempts"), int):  # before issue 32, `attempts` counted the solves
            known["tries"] = known.pop("attempts")
        explanation = data.get("explanation")
        if known.get("correct") is not None:
            known["score"] = Score.from_dict(explanation if isinstance(explanation, dict) else {}, known["correct"])
        return cls(**known)
