"""Leaderboard submission: results.jsonl, the export check, and SUBMISSION_GUIDE.md.

The GAIA leaderboard Space (https://huggingface.co/spaces/gaia-benchmark/leaderboard) takes a JSON-lines
file, one `{"task_id", "model_answer", "reasoning_trace"}` object per task (`reasoning_trace`
optional), and scores it with the same `question_scorer` as `evaluation.scorer`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from evaluation.dataset import Sample
from evaluation.records import TaskRecord

LEADERBOARD_URL = "https://huggingface.co/spaces/gaia-benchmark/leaderboard"
RecordLike = TaskRecord | Mapping[str, Any]


def _fields(record: RecordLike) -> tuple[Any, Any, Any]:
    """(task_id, model_answer, reasoning_trace) of a TaskRecord or a result dict."""
    if isinstance(record, TaskRecord):
        return record.task_id, record.predicted, record.reasoning_trace
    answer = record.get("model_answer", record.get("predicted"))
    return record.get("task_id"), answer, record.get("reasoning_trace", "")


def leaderboard_line(record: RecordLike, *, include_reasoning: bool = True) -> dict[str, Any]:
    """One results.jsonl object."""
    task_id, answer, trace = _fields(record)
    line: dict[str, Any] = {"task_id": task_id, "model_answer": answer}
    if include_reasoning:
        line["reasoning_trace"] = trace if isinstance(trace, str) else str(trace or "")
    return line


def write_results_jsonl(records: Iterable[RecordLike], path: Path, *, include_reasoning: bool = True) -> Path:
    """Write the leaderboard file (one JSON object per line) and return its path.

    ASCII-safe JSON (ü written as an escape): the Space reads the upload with its platform's default encoding,
    which need not be UTF-8, and an escaped line decodes the same under any of them.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="ascii") as fh:
        for record in records:
            fh.write(json.dumps(leaderboard_line(record, include_reasoning=include_reasoning), ensure_ascii=True)
                     + "\n")
    return path


def _ids(ids: Iterable[str], limit: int = 20) -> str:
    ids = list(ids)
    return ", ".join(ids[:limit]) + (f" … and {len(ids) - limit} more" if len(ids) > limit else "")


def check_submission(records: Sequence[RecordLike], samples: Sequence[Sample]) -> list[str]:
    """Problems that would make a leaderboard submission of `samples`' split wrong or rejected; empty when fine.

    Both splits are checked the same way: the leaderboard Space refuses a file whose per-level task
    counts differ from the split's (validation too), or that holds a task id of another split.
    """
    problems: list[str] = []
    rows = [_fields(r) for r in records]
    counts = Counter(task_id for task_id, _, _ in rows)
    expected = [s.task_id for s in samples]
    if missing := [t for t in expected if t not in counts]:
        problems.append(f"missing {len(missing)} of {len(expected)} task(s): {_ids(missing)}")
    if duplicated := [t for t, n in counts.items() if n > 1]:
        problems.append(f"{len(duplicated)} task(s) appear more than once: "
                        + _ids(f"{t} (x{counts[t]})" for t in duplicated))
    if unknown := [t for t in counts if t not in set(expected)]:
        problems.append(f"{len(unknown)} task(s) are not in the split (wrong split?): {_ids(map(str, unknown))}")
    if levels := _level_mismatch(counts, samples):
        problems.append(f"per-level counts differ from the split's (the leaderboard needs them exact): {levels}")
    if bad := [str(t) for t, answer, _ in rows if not isinstance(answer, str)]:
        problems.append(f"{len(bad)} answer(s) are not strings: {_ids(bad)}")
    if empty := [str(t) for t, answer, _ in rows if isinstance(answer, str) and not answer.strip()]:
        problems.append(f"{len(empty)} answer(s) are empty: {_ids(empty)}")
    return problems


def _level_mismatch(counts: Counter[Any], samples: Sequence[Sample]) -> str:
    """'level 1: 2 of 3, ...' for the levels whose submitted line count differs from the split's; '' if none."""
    level_of = {s.task_id: s.level for s in samples}
    wanted = Counter(s.level for s in samples)
    submitted: Counter[int] = Counter()
    for task_id, n in counts.items():
        if task_id in level_of:
            submitted[level_of[task_id]] += n  # duplicates count: the Space counts lines
    return ", ".join(f"level {lvl}: {submitted[lvl]} of {wanted[lvl]}" for lvl in sorted(wanted)
                     if submitted[lvl] != wanted[lvl])


GUIDE = """# Submitting {model_name} to the GAIA leaderboard

The file to upload is `results.jsonl` in this folder: one JSON object per line with `task_id`,
`model_answer` and `reasoning_trace` (the last one is optional for the leaderboard).

## Before you submit
1. Use the **test** split for a ranked entry (its answers are private, so only the leaderboard can
   score it); validation submissions are accepted too but the answers are public.
2. Run the export check (`check_submission`, done by `python -m evaluation run` for either split):
   every task id of the split exactly once, every answer a non-empty string. The Space refuses a
   file whose per-level counts differ from the split's (validation too), and a task id from the
   other split makes the upload fail ("not found in split").
3. Answers must already be in GAIA's final form (the scorer is strict: no units unless asked, lists
   comma-separated in the asked order, numbers without thousands separators when in doubt).

## Steps
1. Open {url} and sign in with your Hugging Face account if the Space asks for it.
2. Expand **Submit a new model for evaluation**.
3. Fill in the form:
   - **Split**: `validation` or `test` (must match the file).
   - **Model name**: e.g. `{model_name}` (the model name + organisation pair must be new).
   - **Model family**: the base LLM family (e.g. GPT-4o, Llama 3, Qwen 2.5).
   - **System prompt example**: the agent's system prompt (see `agent/prompts.py`).
   - **Url to model information**: a page describing the agent (repository or paper).
   - **Organisation**: your team or company.
   - **Contact email**: a valid address (the Space rejects the form without one).
   - **File**: upload `results.jsonl`.
4. Click **Submit Eval**. The Space scores the file with the official `question_scorer`, reports
   success or the first bad line, and the entry appears after a refresh.

Do not repost the validation set or its answers, and do not use it as training data.
"""


def write_submission_guide(output_dir: Path, *, model_name: str) -> Path:
    """Write SUBMISSION_GUIDE.md (the real leaderboard steps and form fields) into `output_dir`."""
    output_dir.mkdir(parents=True, exist_ok=True)
    path = output_dir / "SUBMISSION_GUIDE.md"
    path.write_text(GUIDE.format(model_name=model_name or "my-agent", url=LEADERBOARD_URL), encoding="utf-8")
    return path
