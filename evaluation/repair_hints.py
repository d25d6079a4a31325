"""What to try for each kind of failed task: evaluation/failures.py's categories, mapped to repair hints.

This is not a second taxonomy: a record's `failure_category` (failures.py) decides its repair category,
refined only by what the record itself says (the token budget passed, an error about the context window,
an empty answer). `--only-category` (evaluation.rerun) takes either name.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Literal

from evaluation.records import FailureCategory, TaskRecord

RepairCategory = Literal["wrong_format", "wrong_fact", "no_answer", "cap_reached", "budget", "tool_failure",
                         "context", "endpoint"]

FROM_FAILURE: dict[FailureCategory, RepairCategory | None] = {
    "correct": None,
    "format_only_miss": "wrong_format",
    "plain_wrong": "wrong_fact",
    "no_tool_result_used": "wrong_fact",
    "iteration_cap": "cap_reached",
    "tool_failed": "tool_failure",
    "llm_error": "endpoint",
    "unscored": None,
}
"""Each failures.py category's repair category (None: nothing to repair, or nothing known)."""

HINTS: dict[RepairCategory, str] = {
    "wrong_format": "right content, wrong form: turn the answer check on; re-run with --replay on the same pages",
    "wrong_fact": "tools worked, the reasoning did not: try the team strategy or another model, with --replay "
                  "so only the model changes",
    "no_answer": "no answer came out: turn the answer check on, or raise --max-iterations",
    "cap_reached": "the loop hit its iteration cap: raise --max-iterations, or try the team strategy",
    "budget": "MAX_TOKENS_PER_TASK was passed: raise it, or lower MAX_FILE_SIZE so observations are shorter",
    "tool_failure": "a tool failed or the attachment was never read: re-run live (no --replay); check the "
                    "tool's prerequisites and the error in details.jsonl",
    "context": "the request outgrew the model's window: a model with a larger window, or a smaller MAX_FILE_SIZE",
    "endpoint": "the model endpoint failed after retries: another provider, or --resume --retry-errors after "
                "the outage",
}
"""What to try, per repair category (shown in report.md and the Batch tab)."""

_CONTEXT_WORDS = ("context length", "context window", "context_length", "too long", "maximum context")


def repair_category(record: TaskRecord) -> RepairCategory | None:
    """The repair category of one record; None for a correct (or unscored, unremarkable) one."""
    if record.correct:
        return None
    if record.budget_exhausted:
        return "budget"
    if record.error and any(word in record.error.lower() for word in _CONTEXT_WORDS):
        return "context"
    mapped = FROM_FAILURE.get(record.failure_category)
    if mapped in (None, "wrong_fact") and not record.predicted.strip() and record.correct is False:
        return "no_answer"
    return mapped


def hint_rows(records: Iterable[TaskRecord]) -> list[tuple[RepairCategory, int, str]]:
    """(category, tasks, what to try) for each category present, most frequent first."""
    counts = Counter(c for r in records if (c := repair_category(r)) is not None)
    return [(c, n, HINTS[c]) for c, n in counts.most_common()]


def hints_markdown(records: Iterable[TaskRecord]) -> list[str]:
    """The report's "Repair hints" section (lines), with the re-run command."""
    rows = hint_rows(records)
    lines = ["## Repair hints", ""]
    if not rows:
        return lines + ["- Nothing to repair: no wrong, errored or cut task."]
    lines += ["| Repair category | Tasks | What to try |", "|---|---:|---|"]
    lines += [f"| {c} | {n} | {hint} |" for c, n, hint in rows]
    lines += ["", "Re-run only these: `python -m evaluation run --rerun-failed RUN_DIR [--only-category C] "
                  "[--replay RUN_DIR]`, then `python -m evaluation compare RUN_DIR NEW_RUN_DIR`."]
    return lines
