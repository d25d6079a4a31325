"""A run's summary as typed data (`RunSummary`): what `summary.json` holds, and which scorer's verdicts it counts.

`evaluation.report.summarize` builds it from the records, the run folder (`evaluation.run_folder`) writes
and reads it, and every reader (the CLI, the Batch tab's status line, the report, the chart, the runs
list) takes its fields by name instead of digging in a dict. `summary.json` keeps its shape:
`to_dict()` is exactly the JSON the files always had, `from_dict()` reads old and new ones.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, TypedDict

from evaluation.scorer import DEFAULT_SCORER, SCORERS, scorer_label


class Group(TypedDict):
    """Accuracy of a group of tasks (a level, an attachment type, a source)."""

    total: int
    scored: int
    correct: int
    accuracy: float | None


def verdict_label(scorer: str) -> str:
    """What a run's accuracy is called: `Exact match` (official) or `Correct (lenient scorer)`."""
    if scorer == DEFAULT_SCORER:
        return "Exact match"
    known = "" if scorer in SCORERS else " (unknown)"
    return f"Correct ({scorer} scorer{known})"


@dataclass
class RunSummary:
    """The summary of a run's records (see `evaluation.report` for the counting conventions)."""

    exact_match_rate: float | None = None
    """Correct / scored under the run's scorer (the name is historic: it is the lenient rate for `lenient`)."""
    total: int = 0
    correct: int = 0
    scored: int = 0
    unscored: int = 0
    errors: int = 0
    format_only_misses: int = 0
    lenient_match_rate: float | None = None
    level_metrics: dict[str, Group] = field(default_factory=dict)
    drop_rates: dict[str, dict[str, float | None]] = field(default_factory=dict)
    avg_steps_correct: float | None = None
    by_file_type: dict[str, Group] = field(default_factory=dict)
    by_source: dict[str, Group] = field(default_factory=dict)
    tokens: dict[str, float] = field(default_factory=lambda: {"prompt": 0, "completion": 0, "total": 0,
                                                              "per_task": 0.0})
    latency_s: dict[str, float] = field(default_factory=dict)
    retries: int = 0
    cost_usd: dict[str, float] = field(default_factory=lambda: {"total": 0.0, "per_task": 0.0})
    budget_exhausted: int = 0
    permanent_errors: int = 0
    waited: dict[str, float] = field(default_factory=dict)
    """Task id -> seconds its requests waited for the rate limiter (only the notable ones)."""
    elapsed_s: float | None = None
    failure_categories: dict[str, int] = field(default_factory=dict)
    attempts: dict[str, Any] = field(default_factory=lambda: {"k": 1})
    """`{k, pass_at_1, pass_at_k, majority}` (evaluation.report.attempt_metrics)."""
    meta: dict[str, Any] = field(default_factory=dict)
    """The run's settings and counters (split, model, scorer, sessions, remaining, cost, stop reason…)."""
    submission_check: dict[str, Any] | None = None
    """Batch runs: `{checked, split, problems}` of the leaderboard file check."""
    api: dict[str, Any] | None = None
    """Scoring-API runs: the server's answer."""

    @property
    def scorer(self) -> str:
        """The `SCORERS` name the verdicts came from (a summary without one: the official)."""
        return str(self.meta.get("scorer") or DEFAULT_SCORER)

    @property
    def scorer_label(self) -> str:
        """The UI's long label of the run's scorer (`evaluation.scorer.scorer_label`)."""
        return scorer_label(self.scorer)

    @property
    def verdicts(self) -> str:
        """What the accuracy is called: the scoring server's verdicts, else the local scorer's."""
        server = self.meta.get("verdicts")
        return f"Correct per the server ({server})" if server else verdict_label(self.scorer)

    @property
    def attempts_k(self) -> int:
        """Attempts per task (1 without `--attempts`)."""
        return int(self.attempts.get("k") or 1)

    @property
    def remaining(self) -> int | None:
        """Selected tasks not recorded yet; None when the summary does not say."""
        value = self.meta.get("remaining")
        return None if value is None else int(value)

    def to_dict(self) -> dict[str, Any]:
        """The summary.json object (the optional sections only when present)."""
        data = asdict(self)
        for name in ("submission_check", "api"):
            if data[name] is None:
                del data[name]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunSummary:
        """A summary from summary.json (unknown keys ignored, missing ones at their defaults)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})
