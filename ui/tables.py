"""Records and samples as table rows for the app's Dataframes (pure: no Gradio, no I/O)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from evaluation.records import TaskRecord

RESULT_HEADERS = ["task", "level", "predicted", "expected", "correct", "source", "steps", "time (s)"]
SAMPLE_HEADERS = ["task", "level", "question", "file", "expected"]


class SampleLike(Protocol):
    """What the tables need of `evaluation.dataset.Sample`."""

    task_id: str
    question: str
    level: int | None
    final_answer: str
    file_name: str
    has_answer: bool


def short(text: str | None, limit: int = 80) -> str:
    """One line, at most `limit` characters."""
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def correct_mark(correct: bool | None) -> str:
    """`✅` / `❌ WRONG` (a word beside the cross: without a colour-emoji font ❌ is a thin "x"), or '?' unscored."""
    return "?" if correct is None else ("✅" if correct else "❌ WRONG")


def record_row(record: TaskRecord) -> list[Any]:
    """One results-table row."""
    predicted = record.predicted if not record.error or record.predicted else f"error: {short(record.error, 60)}"
    return [
        record.task_id[:8],
        record.level if record.level is not None else "",
        short(predicted, 60),
        short(record.expected, 60) if record.expected not in (None, "?") else "?",
        correct_mark(record.correct),
        record.source,
        record.steps,
        round(record.latency_s, 1),
    ]


def record_rows(records: Iterable[TaskRecord]) -> list[list[Any]]:
    """Rows for every record, in the order given."""
    return [record_row(r) for r in records]


def merge_record(records: Sequence[TaskRecord], new: TaskRecord) -> list[TaskRecord]:
    """`records` with `new` added, replacing an earlier record of the same task (a retried or resumed task)."""
    kept = [r for r in records if r.task_id != new.task_id]
    kept.append(new)
    return kept


def sample_row(sample: SampleLike) -> list[Any]:
    """One dataset-browser row."""
    return [
        sample.task_id,
        sample.level if sample.level is not None else "",
        short(sample.question, 120),
        sample.file_name or "",
        sample.final_answer if sample.has_answer else "?",
    ]


def sample_rows(samples: Iterable[SampleLike]) -> list[list[Any]]:
    """Dataset-browser rows."""
    return [sample_row(s) for s in samples]


def task_choices(samples: Iterable[SampleLike]) -> list[tuple[str, str]]:
    """(label, task_id) pairs for the task picker: level, attachment marker, start of the question."""
    choices = []
    for s in samples:
        clip = "📎 " if s.file_name else ""
        choices.append((f"L{s.level if s.level is not None else '?'} · {clip}{short(s.question, 70)} "
                        f"· {s.task_id[:8]}", s.task_id))
    return choices


def parse_task_ids(text: str | None) -> list[str]:
    """Task ids typed by a user: separated by commas, spaces or new lines; duplicates dropped."""
    seen: list[str] = []
    for token in (text or "").replace(",", " ").split():
        if token not in seen:
            seen.append(token)
    return seen
