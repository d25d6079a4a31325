"""The one writer of a run folder's output files, for the batch runner and the scoring-API runner.

Every file is rebuilt whole from the records it is given (never appended to), so a resumed or
repeated run lists each task exactly once:
- `details.jsonl`: every TaskRecord;
- `results.jsonl`: the leaderboard submission file (ASCII-safe JSON);
- any extra JSONL tables the run keeps (the API run's `submissions.jsonl`);
- `summary.json`, `report.md` with its chart;
- `SUBMISSION_GUIDE.md` when the run can be submitted to the leaderboard.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evaluation.checkpoint import write_jsonl_atomic
from evaluation.records import TaskRecord
from evaluation.report import write_report
from evaluation.run_summary import RunSummary
from evaluation.submission import write_results_jsonl, write_submission_guide


def write_outputs(out: Path, records: Sequence[TaskRecord], summary: RunSummary, *,
                  tables: Mapping[str, list[dict[str, Any]]] | None = None,
                  guide_for_model: str | None = None) -> None:
    """Write the run folder's files (see the module docstring); `tables` maps extra file names to rows."""
    out.mkdir(parents=True, exist_ok=True)
    records = list(records)
    write_jsonl_atomic(out / "details.jsonl", [r.to_dict() for r in records])
    write_results_jsonl(records, out / "results.jsonl")
    for name, rows in (tables or {}).items():
        write_jsonl_atomic(out / name, rows)
    text = json.dumps(summary.to_dict(), indent=2, ensure_ascii=False, default=str)
    (out / "summary.json").write_text(text, encoding="utf-8")
    write_report(records, summary, out)
    if guide_for_model is not None:
        write_submission_guide(out, model_name=guide_for_model)
