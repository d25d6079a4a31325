"""Evaluation: GAIA data, the official scorer, the batch runner, the scoring API, reports.

    from evaluation import RunConfig, run_evaluation, question_scorer

Names resolve on first use (PEP 562) because the app imports `evaluation.records` at start-up and
must not pay for pandas, matplotlib and the agent before its first page; the imports under
TYPE_CHECKING are the same names, for editors and type checkers.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evaluation.chart import plot_accuracy
    from evaluation.checkpoint import Checkpoint
    from evaluation.compare import CompareError, Comparison, compare_runs
    from evaluation.dataset import DatasetError, GAIADataset, Sample, load_split, statistics
    from evaluation.failures import failure_category, reasoning_summary
    from evaluation.limiter import RateLimiter, RunStopped
    from evaluation.records import FailureCategory, TaskRecord
    from evaluation.report import summarize, write_report
    from evaluation.outputs import write_outputs
    from evaluation.runner import RunConfig, RunError, RunResult, run_batch, run_evaluation
    from evaluation.scorer import Explanation, Score, Scorer, explain, official_scorer, question_scorer
    from evaluation.scoring_api import ApiRunResult, ScoringAPIClient, ScoringAPIError, run_api_evaluation
    from evaluation.seed_api import GAIAEvaluationTool, GAIAEvaluator
    from evaluation.submission import check_submission, write_results_jsonl, write_submission_guide
    from evaluation.task_loop import Progress, TaskLoop

_EXPORTS: dict[str, str] = {
    "plot_accuracy": "chart",
    "Checkpoint": "checkpoint",
    "CompareError": "compare", "Comparison": "compare", "compare_runs": "compare",
    "DatasetError": "dataset", "GAIADataset": "dataset", "Sample": "dataset", "load_split": "dataset",
    "statistics": "dataset",
    "failure_category": "failures", "reasoning_summary": "failures",
    "RateLimiter": "limiter", "RunStopped": "limiter",
    "FailureCategory": "records", "TaskRecord": "records",
    "summarize": "report", "write_report": "report",
    "write_outputs": "outputs",
    "RunConfig": "runner", "RunError": "runner", "RunResult": "runner", "run_batch": "runner",
    "run_evaluation": "runner",
    "Explanation": "scorer", "Score": "scorer", "Scorer": "scorer", "explain": "scorer", "official_scorer": "scorer",
    "question_scorer": "scorer",
    "ApiRunResult": "scoring_api", "ScoringAPIClient": "scoring_api", "ScoringAPIError": "scoring_api",
    "run_api_evaluation": "scoring_api",
    "GAIAEvaluationTool": "seed_api", "GAIAEvaluator": "seed_api",
    "check_submission": "submission", "write_results_jsonl": "submission", "write_submission_guide": "submission",
    "Progress": "task_loop", "TaskLoop": "task_loop",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'evaluation' has no attribute {name!r}")
    value = getattr(import_module(f"evaluation.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
