"""One run directory as an object (`RunFolder`): the only writer of its run.json, checkpoint and cost total.

A run folder holds what a batch needs to be resumed, re-run and compared:
- `run.json` (`RunInfo`): the data source, selection, scorer, strategy, settings snapshot, parent run
  and the cost spent so far — written when the first session starts, then changed field by field;
- `checkpoint.jsonl` (`Checkpoint`): one line per finished task, the truth every output is rebuilt from;
- `summary.json` (`RunSummary`) and the other outputs (`evaluation.outputs`), rebuilt at each end.
The CLI, the Batch tab, resume, `--rerun-failed`, the report and `compare` go through it, so nothing
else opens run.json for writing (a test greps for that).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from evaluation.checkpoint import CHECKPOINT_NAME, Checkpoint, Loaded
from evaluation.records import TaskRecord
from evaluation.run_info import RunInfo
from evaluation.run_summary import RunSummary

log = logging.getLogger(__name__)

RUN_INFO_NAME = "run.json"
SUMMARY_NAME = "summary.json"


class RunError(RuntimeError):
    """A batch cannot start as asked (bad selection, output folder already used, no model); the message says why."""


class RunFolder:
    """A run directory: its run.json, checkpoint, cost and summary (see the module docstring)."""

    def __init__(self, path: Path, session: str = "") -> None:
        self.path = Path(path)
        self.checkpoint = Checkpoint(self.path / CHECKPOINT_NAME, session=session)
        """This session's checkpoint (its lines carry `session`)."""

    # --- run.json ---
    def info(self) -> RunInfo | None:
        """The folder's run.json, or None when it has none (or it is unreadable: logged)."""
        path = self.path / RUN_INFO_NAME
        if not path.is_file():
            return None
        try:
            data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            known = RunInfo.__dataclass_fields__
            return RunInfo(**{k: v for k, v in data.items() if k in known})
        except (ValueError, TypeError) as exc:
            log.warning("%s is unreadable (%s): the run's selection must be given again", path, exc)
            return None

    def start(self, info: RunInfo) -> RunInfo:
        """Save `info` as run.json unless one exists (the folder's first run defines it); return the folder's."""
        if (kept := self.info()) is not None:
            return kept
        info = replace(info, started_at=info.started_at or datetime.now().isoformat(timespec="seconds"))
        self._write(info)
        return info

    def update(self, **changes: Any) -> RunInfo | None:
        """Change fields of run.json (through a temporary file and a rename); None when the folder has none."""
        info = self.info()
        if info is None:
            return None
        info = replace(info, **changes)
        self._write(info)
        return info

    def _write(self, info: RunInfo) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        path = self.path / RUN_INFO_NAME
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(asdict(info), indent=2), encoding="utf-8")
        tmp.replace(path)

    # --- cost ---
    def spent_usd(self) -> float:
        """What the run's model calls cost so far, over every session (0 without run.json)."""
        info = self.info()
        return info.cost_usd if info is not None else 0.0

    def record_cost(self, spent_usd: float | None = None, cap_usd: float | None = None) -> None:
        """Keep the run's total cost and/or the cap of the current invocation in run.json."""
        changes: dict[str, float] = {}
        if spent_usd is not None:
            changes["cost_usd"] = spent_usd
        if cap_usd is not None:
            changes["max_cost_usd"] = cap_usd
        if changes:
            self.update(**changes)

    # --- lineage ---
    def parent(self) -> RunFolder | None:
        """The run whose failures this one re-runs (`--rerun-failed`), or None for a first run."""
        info = self.info()
        return RunFolder(Path(info.parent)) if info is not None and info.parent else None

    # --- checkpoint and outputs ---
    def load(self) -> Loaded:
        """Every record of the checkpoint (the latest per task) and each session's."""
        return self.checkpoint.load()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the folder for this session (FolderBusy if another live run holds it)."""
        with self.checkpoint.exclusive():
            yield

    def summary(self) -> RunSummary | None:
        """The last summary.json, or None when the run never wrote one (or it is damaged)."""
        try:
            data = json.loads((self.path / SUMMARY_NAME).read_text(encoding="utf-8"))
            return RunSummary.from_dict(data) if isinstance(data, dict) else None
        except (OSError, ValueError, TypeError):
            return None

    def write_outputs(self, records: Sequence[TaskRecord], summary: RunSummary, *,
                      tables: Mapping[str, list[dict[str, Any]]] | None = None,
                      guide_for_model: str | None = None) -> None:
        """Rebuild the folder's output files (`evaluation.outputs`) from `records` and `summary`."""
        from evaluation.outputs import write_outputs  # matplotlib behind it: only when a run ends

        write_outputs(self.path, records, summary, tables=tables, guide_for_model=guide_for_model)


@dataclass
class ResumableRun:
    """A run folder with tasks left to do (or never finalized), for the app's Resume list."""

    path: Path
    info: RunInfo
    recorded: int
    """Tasks in its checkpoint."""
    remaining: int | None
    """Tasks left according to its last summary; None when it never wrote one (killed mid-run)."""

    @property
    def label(self) -> str:
        """`validation-20261201-094000 · 3 done, 2 left · local folder /x (level 1)`."""
        left = "not finished" if self.remaining is None else f"{self.remaining} left"
        level = f" (level {self.info.level})" if self.info.level else ""
        scorer = f" · {self.info.scorer} scorer" if self.info.scorer != "official" else ""
        return (f"{self.path.name} · {self.recorded} done, {left} · {self.info.split}, {self.info.source_text}{level}"
                f"{scorer}")


def resumable_runs(root: Path) -> list[ResumableRun]:
    """Run folders under `root` with a run.json and a checkpoint that are not complete, newest first."""
    found: list[ResumableRun] = []
    if not Path(root).is_dir():
        return found
    for path in Path(root).iterdir():
        folder = RunFolder(path)
        info = folder.info() if folder.checkpoint.path.is_file() else None
        if info is None:
            continue
        summary = folder.summary()
        remaining = (summary.remaining or 0) if summary is not None else None
        if remaining == 0:
            continue
        found.append(ResumableRun(path, info, len(folder.load().records), remaining))
    return sorted(found, key=lambda r: r.path.stat().st_mtime, reverse=True)
