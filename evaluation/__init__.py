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
    # `X as X` marks an explicit re-export (PEP 484) of the lazily loaded names below.
    from evaluation.chart import plot_accuracy as plot_accuracy
    from evaluation.checkpoint import Checkpoint as Checkpoint
    from evaluation.compare import CompareError as CompareError
    from evaluation.compare import Comparison as Comparison
    from evaluation.compare import compare_runs as compare_runs
    from evaluation.dataset import DatasetError as DatasetError
    from evaluation.dataset import GAIADataset as GAIADataset
    from evaluation.dataset import Sample as Sample
    from evaluation.dataset import load_split as load_split
    from evaluation.dataset import statistics as statistics
    from evaluation.failures import failure_category as failure_category
    from evaluation.failures import reasoning_summary as reasoning_summary
    from evaluation.limiter import RateLimiter as RateLimiter
    from evaluation.limiter import RunStopped as RunStopped
    from evaluation.outputs import write_outputs as write_outputs
    from evaluation.records import FailureCategory as FailureCategory
    from evaluation.records import TaskRecord as TaskRecord
    from evaluation.report import summarize as summarize
    from evaluation.report import write_report as write_report
    from evaluation.runner import RunConfig as RunConfig
    from evaluation.runner import RunError as RunError
    from evaluation.runner import RunResult as RunResult
    from evaluation.runner import run_batch as run_batch
    from evaluation.runner import run_evaluation as run_evaluation
    from evaluation.scorer import SCORERS as SCORERS
    from evaluation.scorer import Explanation as Explanation
    from evaluation.scorer import Score as Score
    from evaluation.scorer import Scorer as Scorer
    from evaluation.scorer import explain as explain
    from evaluation.scorer import lenient_scorer as lenient_scorer
    from evaluation.scorer import official_scorer as official_scorer
    from evaluation.scorer import question_scorer as question_scorer
    from evaluation.scoring_api import ApiRunResult as ApiRunResult
    from evaluation.scoring_api import ScoringAPIClient as ScoringAPIClient
    from evaluation.scoring_api import ScoringAPIError as ScoringAPIError
    from evaluation.scoring_api import run_api_evaluation as run_api_evaluation
    from evaluation.seed_api import GAIAEvaluationTool as GAIAEvaluationTool
    from evaluation.seed_api import GAIAEvaluator as GAIAEvaluator
    from evaluation.submission import check_submission as check_submission
    from evaluation.submission import write_results_jsonl as write_results_jsonl
    from evaluation.submission import write_submission_guide as write_submission_guide
    from evaluation.task_loop import Progress as Progress
    from evaluation.task_loop import TaskLoop as TaskLoop

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
    "question_scorer": "scorer", "SCORERS": "scorer", "lenient_scorer": "scorer",
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
