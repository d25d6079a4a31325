"""A run folder's own record of what it runs (`run.json`): the data source, the task selection, the scorer.

Written when a batch starts, so a resume — from the CLI (`--resume --output-dir DIR`) or the app's list
of resumable runs — reads the same tasks from the same place without the selection being typed again.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from evaluation.checkpoint import CHECKPOINT_NAME, Checkpoint

log = logging.getLogger(__name__)

RUN_INFO_NAME = "run.json"


@dataclass
class RunInfo:
    """The data source and selection of one run folder."""

    split: str = "validation"
    data_dir: str | None = None
    """The local GAIA folder, or None for the Hugging Face hub."""
    level: int | None = None
    max_samples: int | None = None
    task_ids: list[str] = field(default_factory=list)
    use_rag: bool = True
    scorer: str = "official"
    """The `SCORERS` name every verdict of the folder comes from (a run.json without one: the official)."""
    started_at: str = ""
    """ISO time the run folder was first used."""
    max_iterations: int | None = None
    """The run's iteration cap (`--max-iterations`); None: MAX_ITERATIONS. A resume keeps it unless given again."""
    strategy: str = "react"
    """The strategy every task of the folder is solved with (a run.json without one: react); a resume keeps it."""
    cost_usd: float = 0.0
    """What the run's model calls cost so far, over every session (resumes included)."""
    max_cost_usd: float = 0.0
    """The cost cap of the latest invocation (0 = none); only the current invocation's cap is in force."""
    # --- repair loop (issue 35) ---
    parent: str | None = None
    """The run folder whose failures this run re-runs (`--rerun-failed`); None for a first run."""
    replay_from: str | None = None
    """The run folder whose tool cache answers matching tool calls (`--replay`); None: all live."""
    settings: dict[str, Any] = field(default_factory=dict)
    """The run's non-secret settings (redacted) and run options, to tell what a re-run changed."""
    changed_settings: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Setting -> {"parent": value, "now": value} for each setting that differs from the parent run's."""

    @property
    def source_text(self) -> str:
        """`local folder /x/GAIA` or `Hugging Face hub`, for listings."""
        return f"local folder {self.data_dir}" if self.data_dir else "Hugging Face hub"


def write_run_info(out: Path, info: RunInfo) -> Path:
    """Save `info` as the folder's run.json (kept if one exists: the folder's first run defines it)."""
    path = Path(out) / RUN_INFO_NAME
    if path.is_file():
        return path
    out.mkdir(parents=True, exist_ok=True)
    info.started_at = info.started_at or datetime.now().isoformat(timespec="seconds")
    path.write_text(json.dumps(asdict(info), indent=2), encoding="utf-8")
    return path


def update_run_info(out: Path, **changes: Any) -> RunInfo | None:
    """Change fields of the folder's run.json (written through a temporary file); None when it has none."""
    info = read_run_info(out)
    if info is None:
        return None
    from dataclasses import replace

    info = replace(info, **changes)
    path = Path(out) / RUN_INFO_NAME
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(asdict(info), indent=2), encoding="utf-8")
    tmp.replace(path)
    return info


def read_run_info(out: Path) -> RunInfo | None:
    """The folder's run.json, or None when it has none (or it is unreadable: logged)."""
    path = Path(out) / RUN_INFO_NAME
    if not path.is_file():
        return None
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        known = RunInfo.__dataclass_fields__
        return RunInfo(**{k: v for k, v in data.items() if k in known})
    except (ValueError, TypeError) as exc:
        log.warning("%s is unreadable (%s): the run's selection must be given again", path, exc)
        return None


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
    for folder in Path(root).iterdir():
        checkpoint = folder / CHECKPOINT_NAME
        info = read_run_info(folder) if checkpoint.is_file() else None
        if info is None:
            continue
        remaining: int | None = None
        try:
            summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
            remaining = int((summary.get("meta") or {}).get("remaining") or 0)
        except (OSError, ValueError, TypeError, AttributeError):
            remaining = None
        if remaining == 0:
            continue
        recorded = len(Checkpoint(checkpoint, session="").load().records)
        found.append(ResumableRun(folder, info, recorded, remaining))
    return sorted(found, key=lambda r: r.path.stat().st_mtime, reverse=True)


def with_recorded_selection(config: Any, info: RunInfo | None) -> Any:
    """`config` (a RunConfig resuming this folder) with the folder's own split, source and selection.

    The recorded data source wins when the caller gave none (a CLI resume does not retype --data-dir);
    an explicitly given folder, level, ids or sample count is kept.
    """
    if info is None:
        return config
    from dataclasses import replace

    return replace(config, split=info.split,
                   data_dir=config.data_dir if config.data_dir is not None else
                   (Path(info.data_dir) if info.data_dir else None),
                   level=config.level if config.level is not None else info.level,
                   max_samples=config.max_samples if config.max_samples is not None else info.max_samples,
                   task_ids=config.task_ids or (list(info.task_ids) or None),
                   max_iterations=getattr(config, "max_iterations", None) or info.max_iterations)
