"""A run folder's own record of what it runs (`run.json`): the data source, the task selection, the scorer.

Written (only) by `evaluation.run_folder.RunFolder` when a batch starts, so a resume — from the CLI
(`--resume --output-dir DIR`) or the app's list of resumable runs — reads the same tasks from the same
place without the selection being typed again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluation.selection import TaskSelection


@dataclass
class RunInfo(TaskSelection):
    """The data source and selection (the `TaskSelection`) of one run folder, and how it runs."""

    data_dir: str | None = None
    """The local GAIA folder, or None for the Hugging Face hub."""
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


def with_recorded_selection(config: Any, info: RunInfo | None) -> Any:
    """`config` (a RunConfig resuming this folder) with the folder's own split, source and selection.

    The recorded data source wins when the caller gave none (a CLI resume does not retype --data-dir);
    an explicitly given folder, level, ids or sample count is kept.
    """
    if info is None:
        return config
    from dataclasses import replace

    return replace(config, **config.filled_from(info),
                   data_dir=config.data_dir if config.data_dir is not None else
                   (Path(info.data_dir) if info.data_dir else None),
                   max_iterations=getattr(config, "max_iterations", None) or info.max_iterations)
